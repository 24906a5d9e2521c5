#!/usr/bin/env python3
"""Writes the Realm Studio JSON exports that RealmStudioImportTests reads.

The objects below stand for a Realm file. Each export is written the way a
Realm Studio version writes one (learned from its source; nothing of it is
used here):

- studio13.json: Studio 13 and later. realm-js turns each type's objects
  into plain objects (its toJSON), with one cache per type: an object reached
  twice while writing one type's objects is one object, but the copy of a
  Keeper inside the Pet objects is not the Keeper of the Keeper objects.
  Binary data becomes {}, a Decimal128 {"$numberDecimal": text}, a date its
  ISO text with milliseconds, ObjectId and UUID their hex text. The graph is
  then written in the Flatted format: one array whose first element is the
  root, every string, object and array in a value written as the decimal
  index (a string) of the element holding it.
- studio10.json: Studio 10 to 12 for a file without cycles: the same plain
  objects written as ordinary JSON (every link a copy), binary data as base64.
- studio3.json: Studio 3.6 to 9: a link to an object with a primary key is
  that key; one without is a shallow copy.

Run it from this directory: python3 make-fixtures.py
"""

import base64
import json


class Obj:
    """An object of the pretend Realm file: its type and its values in schema order."""

    def __init__(self, type_name, **values):
        self.type = type_name
        self.values = values


class Data(bytes):
    pass


class Dec:
    def __init__(self, text):
        self.text = text


class Date(str):
    pass


# Every type in schema order, with its primary key (None: no key).
SCHEMA = {
    "Maker": ["code", "name"],
    "Sticker": ["label"],
    "Gadget": ["id", "name", "flag", "small", "medium", "ratio", "score", "count", "memo", "when", "blob",
               "maybeBlob", "uuid", "oid", "amount", "anything", "tags", "numbers", "ratings", "dates",
               "mixedList", "maker", "makers", "makerSet", "makerMap", "sticker", "twin", "related", "part",
               "parts", "twinOf"],
    "Keeper": ["id", "name", "pets", "favorite"],
    "Pet": ["name", "keeper", "buddy", "photo", "keptBy"],
    "DiaryEntry": ["id", "date", "dateAdded", "image", "memo", "mood"],
}
PRIMARY_KEYS = {"Maker": "code", "Gadget": "id", "Keeper": "id", "DiaryEntry": "id"}
EMBEDDED = {"Part"}
AWKWARD = 'He said "hi", then\nleft\ttwice — 트랜잭션 테스트 🎉'


def make_file(cycles):
    acme = Obj("Maker", code="acme", name="Acme Corp")
    jeonja = Obj("Maker", code="전자", name="전자 상사")
    quote = Obj("Maker", code='o"dd, one', name="Odd")
    sticker1 = Obj("Sticker", label="sticker 1")
    sticker2 = Obj("Sticker", label="sticker 2")
    g1 = Obj("Gadget", id=1, name=AWKWARD, flag=True, small=-99, medium=1000000, ratio=1.100000023841858,
             score=0.1, count=7, memo=AWKWARD, when=Date("2024-05-01T09:30:15.250Z"), blob=Data(b"\x00\x01\xfe"),
             maybeBlob=None, uuid="5f0c8c6e-2b6a-4a4e-9d55-0c3d5b7e1a01", oid="65a1f0c2e4b0a1b2c3d4e5f6",
             amount=Dec("12.50"), anything=acme, tags=["red", "", "파랑"], numbers=[3, 1, 2],
             ratings={"x": 1.5, "y": None}, dates=[Date("2020-01-01T00:00:00.000Z"), Date("1969-07-20T20:17:40.000Z")],
             mixedList=[1, "two", 2.5, True, None, Dec("3.25"), sticker2], maker=acme, makers=[acme, jeonja],
             makerSet=[acme, quote], makerMap={"a": acme, "none": None}, sticker=sticker1, twin=None, related=[],
             part=Obj("Part", label="bolt", weight=0.5, notes=["zinc", "M4"], maker=jeonja),
             parts=[Obj("Part", label="nut", weight=None, notes=[], maker=acme),
                    Obj("Part", label="washer", weight=0.1, notes=["steel"], maker=None)],
             twinOf=[])
    g2 = Obj("Gadget", id=2, name="gadget 2", flag=False, small=0, medium=0, ratio=0, score=2.5, count=None,
             memo=None, when=Date("2024-05-02T00:00:00.000Z"), blob=Data(b""), maybeBlob=Data(b"hi"),
             uuid="00000000-0000-4000-8000-000000000002", oid="65a1f0c2e4b0a1b2c3d4e5f7", amount=Dec("-0.001"),
             anything="text", tags=[], numbers=[], ratings={}, dates=[], mixedList=[], maker=None, makers=[],
             makerSet=[], makerMap={}, sticker=sticker2, twin=None, related=[], part=None, parts=[], twinOf=[])
    g3 = Obj("Gadget", id=3, name="gadget 3", flag=True, small=5, medium=-7, ratio=-2.5, score=-1e-3, count=0,
             memo="", when=Date("1999-12-31T23:59:59.999Z"), blob=Data(b""), maybeBlob=None,
             uuid="00000000-0000-4000-8000-000000000003", oid="65a1f0c2e4b0a1b2c3d4e5f8", amount=Dec("0"),
             anything=42, tags=["solo"], numbers=[9], ratings={"z": 0.0}, dates=[], mixedList=[], maker=quote,
             makers=[quote, quote], makerSet=[], makerMap={}, sticker=None, twin=None, related=[], part=None,
             parts=[], twinOf=[])
    g1.values["twin"] = g2
    g1.values["related"] = [g2, g3]
    g1.values["mixedList"].append(g3)
    if cycles:
        g2.values["twinOf"] = [g1]
        g2.values["twin"] = g1
        g1.values["twinOf"] = [g2]
        g3.values["related"] = [g3, g1]
    k1 = Obj("Keeper", id="65b000000000000000000001", name="Ann", pets=[], favorite=None)
    k2 = Obj("Keeper", id="65b000000000000000000002", name="Bo", pets=[], favorite=None)
    p1 = Obj("Pet", name="Mochi", keeper=None, buddy=None, photo=Data(b"\x89PNG"), keptBy=[])
    p2 = Obj("Pet", name="Bori", keeper=None, buddy=None, photo=None, keptBy=[])
    p3 = Obj("Pet", name="Nabi", keeper=None, buddy=None, photo=None, keptBy=[])
    k1.values["pets"] = [p1, p2]
    k1.values["favorite"] = p2
    k2.values["pets"] = [p3]
    if cycles:
        for pet, keeper in [(p1, k1), (p2, k1), (p3, k2)]:
            pet.values["keeper"] = keeper
            pet.values["keptBy"] = [keeper]
        p1.values["buddy"] = p2
        p2.values["buddy"] = p1
        p3.values["buddy"] = p3
    d1 = Obj("DiaryEntry", id="2024-05-01-1", date="2024-05-01", dateAdded=Date("2024-05-01T21:04:05.120Z"),
             image=Data(b"\xff\xd8\xff\xe0JFIF"), memo="오늘은 바다에 갔다. 파도가 높았다", mood="happy")
    d2 = Obj("DiaryEntry", id="2024-05-02-1", date="2024-05-02", dateAdded=Date("2024-05-02T08:00:00.000Z"),
             image=None, memo="비 오는 날", mood="sad")
    if not cycles:
        # Linking objects always close a cycle: an export without cycles has none.
        for obj in [g1, g2, g3, p1, p2, p3]:
            obj.values.pop("twinOf", None)
            obj.values.pop("keptBy", None)
    return {
        "Maker": [acme, jeonja, quote],
        "Sticker": [sticker1, sticker2],
        "Gadget": [g1, g2, g3],
        "Keeper": [k1, k2],
        "Pet": [p1, p2, p3],
        "DiaryEntry": [d1, d2],
    }


def to_plain(value, cache, data):
    """realm-js's toJSON: an object (cached per call by identity), collections mapped."""
    if isinstance(value, Obj):
        if id(value) in cache:
            return cache[id(value)]
        out = {}
        cache[id(value)] = out
        for name, item in value.values.items():
            out[name] = to_plain(item, cache, data)
        return out
    if isinstance(value, Data):
        return data(value)
    if isinstance(value, Dec):
        return {"$numberDecimal": value.text}
    if isinstance(value, list):
        return [to_plain(item, cache, data) for item in value]
    if isinstance(value, dict):
        return {key: to_plain(item, cache, data) for key, item in value.items()}
    return value


def flatted(root):
    """The Flatted encoding of a graph of dicts, lists and strings."""
    elements = []
    known = {}

    def index(value):
        key = ("s", value) if isinstance(value, str) else id(value)
        if key not in known:
            known[key] = str(len(elements))
            elements.append(value)
        return known[key]

    def encode(value):
        return index(value) if isinstance(value, (str, dict, list)) else value

    index(root)
    out = []
    position = 0
    while position < len(elements):
        element = elements[position]
        if isinstance(element, dict):
            out.append({key: encode(item) for key, item in element.items()})
        elif isinstance(element, list):
            out.append([encode(item) for item in element])
        else:
            out.append(element)
        position += 1
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def studio13():
    types = make_file(cycles=True)
    # One toJSON call (and cache) per type; binary data is a new {} each time it is read.
    root = {name: to_plain(objects, {}, lambda data: {}) for name, objects in types.items()}
    return flatted(root)


def studio10():
    types = make_file(cycles=False)
    base64_text = lambda data: base64.b64encode(data).decode()
    root = {name: to_plain(objects, {}, base64_text) for name, objects in types.items()}
    return json.dumps(root, ensure_ascii=False, indent=2)


def studio3():
    types = make_file(cycles=True)
    del types["Gadget"]  # mixed, embedded objects and Decimal128 came with Realm 10

    def value(item, name):
        if isinstance(item, Obj):
            key = PRIMARY_KEYS.get(item.type)
            return item.values[key] if key else shallow(item)
        if isinstance(item, Data):
            return base64.b64encode(item).decode()
        if isinstance(item, list):
            return [value(element, name) for element in item]
        return item

    def shallow(obj):
        # A copy of an object without a primary key; its own links to such objects are left out here, as
        # the copy would never end for the pets' buddies (Studio 9 could not export such a file).
        return {name: value(item, name) for name, item in obj.values.items()
                if name != "buddy" and name != "keptBy"}

    root = {name: [shallow(obj) for obj in objects] for name, objects in types.items()}
    return json.dumps(root, ensure_ascii=False, indent=2)


if __name__ == "__main__":
    for name, text in [("studio13.json", studio13()), ("studio10.json", studio10()), ("studio3.json", studio3())]:
        with open(name, "w", encoding="utf-8") as out:
            out.write(text)
            out.write("\n")
