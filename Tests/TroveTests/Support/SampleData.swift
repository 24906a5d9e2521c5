import Foundation

@testable import Trove

/// Ana owns Rex (3) and two chores; Bo owns Tom (9) and one, done; Cy owns nothing.
func addOwners(to db: Database) throws {
    try db.write {
        for (name, pet, chores) in [("Ana", "Rex", ["dishes", "laundry"]), ("Bo", "Tom", ["bins"]), ("Cy", nil, [])] {
            let owner = Owner()
            owner.name = name
            if let pet {
                owner.pet = Pet()
                owner.pet?.name = pet
                owner.pet?.age = name == "Ana" ? 3 : 9
                owner.pet?.owner = owner
            }
            try db.add(owner)
            for title in chores {
                let chore = Chore()
                chore.title = title
                chore.owner = owner
                chore.done = title == "bins"
                try db.add(chore)
            }
        }
    }
}

/// Three playlists: "a" (hit, b-side, hit; tags Rock, live), "b" (b-side; jazz), "c" (empty).
func addPlaylists(to db: Database) throws {
    try db.write {
        let hit = Song()
        hit.title = "hit"
        hit.seconds = 200
        let bSide = Song()
        bSide.title = "b-side"
        bSide.seconds = 100
        for (name, songs, tags) in [("a", [hit, bSide, hit], ["Rock", "live"]), ("b", [bSide], ["jazz"]), ("c", [], [])] {
            let list = Playlist()
            list.name = name
            list.songs.append(contentsOf: songs)
            list.tags.append(contentsOf: tags)
            try db.add(list)
        }
    }
}

/// `AllTypes` objects with the given ids, each with `int` and `string` set by
/// `fill` (by default `int` the id and `string` "s" and the id), in one write.
func addAllTypes(
    _ ids: ClosedRange<Int>, to db: Database,
    fill: (AllTypes) -> Void = { object in
        object.int = object.id
        object.string = "s\(object.id)"
    }
) throws {
    try db.write {
        for id in ids {
            let object = AllTypes()
            object.id = id
            fill(object)
            try db.add(object)
        }
    }
}
