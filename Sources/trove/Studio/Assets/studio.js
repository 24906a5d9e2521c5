// Trove Studio: the page `trove studio` serves. Plain JavaScript, no packages.
// It reads and writes the file only through the JSON API (see openapi.json).
"use strict";

const token = new URLSearchParams(location.search).get("token") || "";
const PAGE = 100;            // objects per page fetched
const ROW = 30;              // row height in pixels (matches --row in studio.css)
const $ = (id) => document.getElementById(id);

const state = {
  info: null,
  schema: new Map(),         // type name -> schema
  types: [],                 // [{name, count, primaryKey, embedded}]
  type: null,                // the type shown
  filter: "",
  sort: null, ascending: true,
  total: 0,
  pages: new Map(),          // page index -> objects (or a promise while loading)
  generation: 0,             // bumps whenever the query or the file changes
};

// MARK: API

/** The file's sync status, read-only: its space and the changes it has not sent. */
function showSync(sync) {
  const badge = $("sync");
  badge.hidden = !sync;
  if (!sync) return;
  badge.textContent = `syncs with ${sync.space} · ${sync.pendingChanges} to send`;
  badge.title = `TroveSync: types ${sync.types.join(", ")}; device ${sync.device}; pulled through sequence ${sync.pulledThrough}. ` +
    "Writes to synced types go through the app's SyncClient, not the studio.";
}

async function api(path, options = {}) {
  const headers = Object.assign({ "X-Trove-Token": token }, options.headers || {});
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, Object.assign({}, options, { headers }));
  const text = await response.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (e) { body = { error: { kind: "internal", message: text } }; }
  if (!response.ok) {
    const error = new Error((body && body.error && body.error.message) || response.statusText);
    error.kind = body && body.error && body.error.kind;
    error.position = body && body.error && body.error.position;
    error.status = response.status;
    throw error;
  }
  return body;
}

const enc = encodeURIComponent;
const typePath = (type) => `/api/types/${enc(type)}`;

// MARK: Start

document.addEventListener("DOMContentLoaded", start);

async function start() {
  window.troveStudioStarted = performance.now();   // for scripts/studio-measure.py
  try {
    const [info] = await Promise.all([api("/api/info"), loadSchema(), loadTypes()]);
    state.info = info;
    $("file").textContent = state.info.file;
    $("mode").hidden = !state.info.readOnly;
    showSync(state.info.sync);
    document.body.classList.toggle("read-only", state.info.readOnly);
    $("add-object").hidden = state.info.readOnly;
    const first = state.types.find((t) => !t.embedded) || state.types[0];
    if (first) selectType(first.name);
  } catch (error) {
    toast(error.message, true);
  }
  $("query").addEventListener("submit", (event) => { event.preventDefault(); runQuery(); });
  // Drawn at once: the browser sends scroll events once a frame anyway.
  $("grid-scroll").addEventListener("scroll", () => { syncHeader(); draw(); });
  $("drawer-close").addEventListener("click", () => { $("drawer").hidden = true; });
  $("modal-close").addEventListener("click", closeModal);
  $("modal").addEventListener("click", (event) => { if (event.target === $("modal")) closeModal(); });
  document.addEventListener("keydown", (event) => { if (event.key === "Escape" && !$("modal").hidden) closeModal(); });
  $("show-schema").addEventListener("click", showSchema);
  $("run-verify").addEventListener("click", runVerify);
  $("add-object").addEventListener("click", () => showCreate());
  window.addEventListener("resize", render);
  listen();
}

async function loadSchema() {
  const schema = await api("/api/schema");
  state.schema = new Map(schema.types.map((t) => [t.name, t]));
}

async function loadTypes() {
  const { types } = await api("/api/types");
  state.types = types;
  const list = $("type-list");
  list.replaceChildren(...types.map((type) => {
    const item = document.createElement("li");
    item.dataset.type = type.name;
    item.classList.toggle("selected", type.name === state.type);
    item.classList.toggle("embedded", type.embedded);
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = type.name;
    const count = document.createElement("span");
    count.className = "count";
    count.textContent = type.count.toLocaleString("en-US");
    item.append(name, count);
    item.addEventListener("click", () => selectType(type.name));
    return item;
  }));
}

function selectType(name, filter = "") {
  state.type = name;
  state.filter = filter;
  state.sort = null;
  state.ascending = true;
  $("filter").value = filter;
  $("filter").placeholder = examplePredicate(name);
  for (const item of $("type-list").children) item.classList.toggle("selected", item.dataset.type === name);
  $("export").href = `${typePath(name)}/export?format=json&token=${enc(token)}`;
  $("export").setAttribute("download", `${name}.json`);
  $("grid-scroll").scrollTop = 0;
  clearRows();
  buildHeader();
  reload();
}

function clearRows() {
  for (const known of drawn.values()) known.element.remove();
  drawn.clear();
}

/// A query bar hint in the type's own terms.
function examplePredicate(type) {
  const properties = schemaOf(type).properties.filter((p) => !p.collection);
  const text = properties.find((p) => p.type === "string" && !p.primaryKey);
  const number = properties.find((p) => NUMERIC.has(p.type) && !p.primaryKey);
  const parts = [];
  if (text) parts.push(`${text.name} CONTAINS[c] 'word'`);
  if (number) parts.push(`${number.name} > 0`);
  return parts.length ? `Realm predicate, e.g. ${parts.join(" AND ")}` : "Realm predicate, e.g. TRUEPREDICATE";
}

function runQuery() {
  state.filter = $("filter").value;
  $("grid-scroll").scrollTop = 0;
  reload();
}

// MARK: The grid: rows drawn only where the view is, pages fetched as it scrolls

function schemaOf(type) { return state.schema.get(type) || { properties: [], primaryKey: null }; }

/// Column widths by type and property, as the user dragged them (this page's session).
const columnWidths = new Map();

/// A column's width: as dragged, or by what it holds — text wide, numbers and flags narrow.
function columnWidth(property) {
  const dragged = columnWidths.get(`${state.type}.${property.name}`);
  if (dragged) return dragged;
  if (property.collection) return 150;
  switch (property.type) {
    case "string": return property.primaryKey ? 180 : 320;
    case "bool": return 90;
    case "int": case "int8": case "int16": case "int32": case "float": case "double": return 110;
    case "date": return 220;
    case "data": return 200;
    default: return 180;
  }
}

/// Sets the width of one column in the header, every row drawn and the scrolled space.
function applyWidths() {
  const properties = schemaOf(state.type).properties;
  const total = 70 + properties.reduce((sum, property) => sum + columnWidth(property), 0) + (state.info.readOnly ? 0 : 44);
  $("grid-space").style.width = `${total}px`;
  for (const row of $("grid-space").children) {
    properties.forEach((property, column) => {
      const cell = row.children[column + 1];
      if (cell) cell.style.width = `${columnWidth(property)}px`;
    });
  }
}

function buildHeader() {
  const head = $("grid-head");
  const cells = [headCell("key", "#", null)];
  for (const property of schemaOf(state.type).properties) {
    const cell = headCell("", property.name, property);
    cell.style.width = `${columnWidth(property)}px`;
    cell.append(resizeHandle(cell, property));
    cells.push(cell);
  }
  if (!state.info.readOnly) cells.push(headCell("actions", "", null));
  head.replaceChildren(...cells);
  applyWidths();
}

/// The right edge of a header cell: drag it to make the column wider or narrower.
function resizeHandle(cell, property) {
  const handle = document.createElement("span");
  handle.className = "resize";
  handle.title = `Drag to resize ${property.name}`;
  handle.addEventListener("click", (event) => event.stopPropagation());
  handle.addEventListener("mousedown", (event) => {
    event.preventDefault();
    event.stopPropagation();
    const startX = event.clientX, startWidth = columnWidth(property);
    const move = (moved) => {
      columnWidths.set(`${state.type}.${property.name}`, Math.max(60, Math.min(1200, startWidth + moved.clientX - startX)));
      cell.style.width = `${columnWidth(property)}px`;
      applyWidths();
    };
    const up = () => { document.removeEventListener("mousemove", move); document.removeEventListener("mouseup", up); };
    document.addEventListener("mousemove", move);
    document.addEventListener("mouseup", up);
  });
  return handle;
}

function headCell(kind, text, property) {
  const cell = document.createElement("div");
  cell.className = `hcell ${kind}`;
  cell.textContent = text;
  if (!property) return cell;
  cell.dataset.property = property.name;
  cell.title = `${property.name}: ${property.typeDescription}${property.primaryKey ? " (primary key)" : ""}${property.indexed ? " (indexed)" : ""}`;
  const type = document.createElement("span");
  type.className = "type";
  type.textContent = property.typeDescription;
  cell.append(type);
  const sortable = !property.collection && property.type !== "link" && property.type !== "mixed";
  if (sortable) {
    cell.addEventListener("click", () => {
      if (state.sort === property.name) state.ascending = !state.ascending;
      else { state.sort = property.name; state.ascending = true; }
      for (const other of $("grid-head").children) other.classList.remove("sorted-asc", "sorted-desc");
      cell.classList.add(state.ascending ? "sorted-asc" : "sorted-desc");
      reload();
    });
    if (property.type !== "data") {
      const chart = document.createElement("span");
      chart.className = "chart";
      chart.textContent = "▥";
      chart.title = `Chart ${property.name}`;
      chart.addEventListener("click", (event) => { event.stopPropagation(); showChart(property); });
      cell.append(chart);
    }
  }
  return cell;
}

function syncHeader() { $("grid-head").scrollLeft = $("grid-scroll").scrollLeft; }

function queryString(offset, limit) {
  const parts = [`offset=${offset}`, `limit=${limit}`];
  if (state.filter.trim()) parts.push(`filter=${enc(state.filter)}`);
  if (state.sort) parts.push(`sort=${enc(state.sort)}`, `ascending=${state.ascending}`);
  return parts.join("&");
}

/// Starts over: the query or the file changed. Rows already drawn stay until their page is back.
async function reload(keepRows = false) {
  state.generation += 1;
  if (!keepRows) { state.pages.clear(); }
  const generation = state.generation;
  const started = performance.now();
  try {
    const first = await fetchPage(0);
    if (generation !== state.generation) return;
    hideQueryError();
    state.total = first.total;
    state.pages.clear();
    state.pages.set(0, first.objects);
    if (keepRows) await refetchVisible(generation);
    setStatus(`${state.total.toLocaleString("en-US")} ${state.type} object${state.total === 1 ? "" : "s"}` +
      `${state.filter.trim() ? ` matching ${state.filter}` : ""} · first page in ${Math.round(performance.now() - started)} ms`);
  } catch (error) {
    if (generation !== state.generation) return;
    if (error.kind === "invalidQuery" || error.kind === "unsupportedPredicate" || error.kind === "invalidProperty") {
      showQueryError(error);
      state.total = 0;
      state.pages.clear();
      setStatus("The query has an error (above): no objects shown");
    } else {
      toast(error.message, true);
    }
  }
  $("grid-space").style.height = `${state.total * ROW}px`;
  render();
}

/// After a commit: the pages on screen again, so the rows change in place and the scroll stays.
async function refetchVisible(generation) {
  const { first, last } = visibleRange();
  const pages = new Set();
  for (let row = first; row <= last; row += PAGE) pages.add(Math.floor(row / PAGE));
  pages.add(Math.floor(last / PAGE));
  pages.delete(0);
  await Promise.all([...pages].map(async (page) => {
    const fetched = await fetchPage(page);
    if (generation === state.generation) state.pages.set(page, fetched.objects);
  }));
}

async function fetchPage(page) {
  const started = performance.now();
  const result = await api(`${typePath(state.type)}/objects?${queryString(page * PAGE, PAGE)}`);
  // The first page's API time, for scripts/studio-measure.py.
  if (window.troveStudioFirstPage === undefined) window.troveStudioFirstPage = performance.now() - started;
  return result;
}

function visibleRange() {
  const scroll = $("grid-scroll");
  const first = Math.max(0, Math.floor(scroll.scrollTop / ROW) - 5);
  const last = Math.min(Math.max(0, state.total - 1), Math.ceil((scroll.scrollTop + scroll.clientHeight) / ROW) + 5);
  return { first, last };
}

let renderQueued = false;
function render() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => { renderQueued = false; draw(); });
}

/// Rows on screen by index, with the object each shows: a row stays as long as its
/// object does (so a click or an edit in it is not cut short by a redraw).
const drawn = new Map();

function draw() {
  const space = $("grid-space");
  if (!state.type) return;
  const { first, last } = visibleRange();
  const properties = schemaOf(state.type).properties;
  const missing = new Set();
  const wanted = new Set();
  for (let index = first; index <= last && index < state.total; index++) {
    const page = Math.floor(index / PAGE);
    const objects = state.pages.get(page);
    const object = Array.isArray(objects) ? objects[index - page * PAGE] || null : null;
    if (!Array.isArray(objects)) missing.add(page);
    wanted.add(index);
    const known = drawn.get(index);
    if (known && known.object === object && known.type === state.type && object !== null) continue;
    if (known && known.element.querySelector(".cell.editing")) continue;
    const row = drawRow(index, object, properties);
    if (known) known.element.replaceWith(row); else space.append(row);
    drawn.set(index, { object, type: state.type, element: row });
  }
  for (const [index, known] of drawn) {
    if (!wanted.has(index)) { known.element.remove(); drawn.delete(index); }
  }
  for (const page of missing) loadPage(page);
}

function loadPage(page) {
  if (state.pages.has(page)) return;
  const generation = state.generation;
  state.pages.set(page, "loading");
  fetchPage(page).then((result) => {
    if (generation !== state.generation) return;
    state.pages.set(page, result.objects);
    draw();
  }, (error) => {
    if (generation === state.generation) state.pages.delete(page);
    toast(error.message, true);
  });
}

function drawRow(index, object, properties) {
  const row = document.createElement("div");
  row.className = "row";
  row.style.top = `${index * ROW}px`;
  row.dataset.index = index;
  const key = document.createElement("div");
  key.className = "cell key";
  key.textContent = object ? object.key : "…";
  row.append(key);
  if (!object) {
    row.classList.add("loading");
    for (const property of properties) {
      const cell = document.createElement("div");
      cell.className = "cell";
      cell.style.width = `${columnWidth(property)}px`;
      row.append(cell);
    }
    return row;
  }
  row.dataset.key = object.key;
  properties.forEach((property, column) => {
    const cell = document.createElement("div");
    cell.className = "cell";
    cell.style.width = `${columnWidth(property)}px`;
    cell.dataset.property = property.name;
    fillCell(cell, object.values[column], property, state.type, object.key);
    if (isEditable(property)) {
      cell.classList.add("editable");
      cell.addEventListener("dblclick", () => editCell(cell, object, property, column));
    }
    row.append(cell);
  });
  if (!state.info.readOnly) {
    const actions = document.createElement("div");
    actions.className = "cell actions";
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "danger delete";
    remove.title = "Delete this object";
    remove.textContent = "×";
    remove.addEventListener("click", () => deleteObject(state.type, object.key));
    actions.append(remove);
    row.append(actions);
  }
  return row;
}

// MARK: Values

const NUMERIC = new Set(["int", "int8", "int16", "int32", "float", "double", "decimal", "decimal128"]);

function fillCell(cell, value, property, type, key) {
  if (NUMERIC.has(property.type) && !property.collection) cell.classList.add("num");
  cell.replaceChildren(...valueNodes(value, property, type, key));
  cell.title = cell.textContent;
}

/// The characters of a string a cell or card shows; the rest is a click away.
const STRING_SHOWN = 1000;

/// The characters of a long string the side panel shows; the whole text opens in a tab of its own.
const STRING_PANEL = 100000;

/// A long string the grid cut, in the side panel: up to STRING_PANEL
/// characters to read and select, and a link to the whole text as plain text.
async function openValue(type, key, property) {
  $("drawer").hidden = false;
  $("drawer-title").textContent = `${type} ${key} · ${property.name}`;
  const body = $("drawer-body");
  body.replaceChildren(span("nil", "loading…"));
  const address = `${typePath(type)}/objects/${enc(key)}/${enc(property.name)}/data?token=${enc(token)}`;
  try {
    const response = await fetch(address);
    if (!response.ok) throw new Error((await response.json()).error.message);
    const whole = await response.text();
    const text = document.createElement("textarea");
    text.className = "whole";
    text.readOnly = true;
    text.value = whole.length > STRING_PANEL ? whole.slice(0, STRING_PANEL) : whole;
    text.setAttribute("aria-label", `${property.name} of ${type} ${key}`);
    const open = document.createElement("a");
    open.className = "open-whole";
    open.href = address;
    open.target = "_blank";
    open.rel = "noopener";
    open.textContent = whole.length > STRING_PANEL
      ? `The first ${STRING_PANEL.toLocaleString("en-US")} of ${whole.length.toLocaleString("en-US")} characters; open the whole text`
      : `${whole.length.toLocaleString("en-US")} characters; open as text`;
    open.dataset.length = String(whole.length);
    body.replaceChildren(open, text);
  } catch (error) {
    body.replaceChildren(span("nil", error.message));
  }
}

/// What a value looks like: text, a link to follow, a collection to open, an image.
function valueNodes(value, property, type, key) {
  if (value === null || value === undefined) return [span("nil", "nil")];
  if (typeof value === "string" && value.length > STRING_SHOWN) value = { $string: value.length, text: value.slice(0, STRING_SHOWN) };
  if (typeof value !== "object") return [document.createTextNode(typeof value === "boolean" ? (value ? "true" : "false") : String(value))];
  if ("$string" in value) {
    // A long string, cut: its start, its length, and the whole value in the side panel.
    // The length comes first, so that a narrow cell still shows what opens the rest.
    const more = span("link more", `${value.$string.toLocaleString("en-US")} characters`);
    more.title = "Show the whole value";
    more.addEventListener("click", (event) => { event.stopPropagation(); openValue(type, key, property); });
    return [more, document.createTextNode(" " + value.text.slice(0, STRING_SHOWN) + "…")];
  }
  if ("$link" in value) {
    const link = span("link", `${value.$link} ${value.label !== undefined ? value.label : "#" + value.key}`);
    link.addEventListener("click", () => openRelated(type, key, property, `${property.name} → ${value.$link}`));
    return [link];
  }
  if ("$count" in value) {
    const label = property.collection === "linkingObjects"
      ? `← ${value.$count} ${property.objectType}`
      : `${property.collection} (${value.$count})`;
    const collection = span("coll", label);
    collection.addEventListener("click", () => openRelated(type, key, property, `${type} ${key} · ${property.name}`));
    return [collection];
  }
  if ("$data" in value) {
    const nodes = [];
    if (value.image) {
      const image = document.createElement("img");
      image.className = "thumb";
      image.alt = property.name;
      image.loading = "lazy";
      image.src = `${typePath(type)}/objects/${enc(key)}/${enc(property.name)}/data?token=${enc(token)}`;
      image.addEventListener("error", () => image.remove());   // bytes that only start like an image
      nodes.push(image);
    }
    nodes.push(document.createTextNode(`${formatSize(value.$data)} `));
    nodes.push(span("hex", value.hex.slice(0, 16) + (value.$data > 8 ? "…" : "")));
    return nodes;
  }
  if ("$date" in value) return [document.createTextNode(formatDate(value.$date))];
  for (const tag of ["$uuid", "$oid", "$decimal", "$decimal128", "$double", "$float"]) {
    if (tag in value) return [document.createTextNode(value[tag])];
  }
  return [document.createTextNode(JSON.stringify(value))];
}

function span(className, text) {
  const element = document.createElement("span");
  element.className = className;
  element.textContent = text;
  return element;
}

function formatSize(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function formatDate(iso) { return iso.replace("T", " ").replace(/(\.\d{3})\d*Z$/, "$1Z"); }

// MARK: Editing in place

function isEditable(property) {
  return !state.info.readOnly && !property.primaryKey && !property.collection && !property.embedded &&
    property.type !== "data" && property.type !== "mixed";
}

/// The text an input starts with for a value.
function editText(value, property) {
  if (value === null || value === undefined) return "";
  if (typeof value !== "object") return String(value);
  if ("$date" in value) return value.$date.replace(/Z$/, "").slice(0, 23);
  if ("$link" in value) return value.label !== undefined ? value.label : value.key;
  for (const tag of ["$uuid", "$oid", "$decimal", "$decimal128", "$double", "$float"]) if (tag in value) return value[tag];
  return JSON.stringify(value);
}

/// The JSON value an input's text stands for, by the property's type (as `trove import` reads it).
function parseInput(text, property) {
  if (text === "" && property.optional) return null;
  switch (property.type) {
    case "bool": return text === "true";
    case "int": case "int8": case "int16": case "int32": return /^-?\d+$/.test(text.trim()) ? Number(text) : text;
    case "float": case "double": return text.trim() !== "" && !isNaN(Number(text)) ? Number(text) : text;
    // A date and time without a zone is UTC, as the grid shows it.
    case "date": return /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(text.trim()) ? `${text.trim()}Z` : text;
    case "link": {
      const target = schemaOf(property.objectType);
      const key = target.properties.find((p) => p.primaryKey);
      if (!key || NUMERIC.has(key.type)) return /^-?\d+$/.test(text.trim()) ? Number(text) : text;
      return text;
    }
    default: return text;
  }
}

async function editCell(cell, object, property, column) {
  if (cell.classList.contains("editing")) return;
  let before = object.values[column];
  if (before && typeof before === "object" && "$string" in before) {
    // The grid has the start of a long string: edit the whole of it.
    try {
      before = (await api(`${typePath(state.type)}/objects/${enc(object.key)}`)).values[column];
    } catch (error) {
      toast(error.message, true);
      return;
    }
  }
  let input;
  if (property.type === "bool") {
    input = document.createElement("select");
    const options = property.optional ? ["", "true", "false"] : ["true", "false"];
    for (const option of options) input.append(new Option(option === "" ? "nil" : option, option));
    input.value = before === null ? "" : String(before);
  } else if (property.type === "string" && (/\n/.test(editText(before, property)) || editText(before, property).length > 40)) {
    // Long text is edited in a box of several lines over the cell: Enter adds a line, Ctrl+Enter (or ⌘+Enter) saves.
    input = document.createElement("textarea");
    input.className = "long-edit";
    input.value = editText(before, property);
    input.rows = Math.min(12, Math.max(4, input.value.split("\n").length + 1));
    input.placeholder = (property.optional ? "empty: nil; " : "") + "Ctrl+Enter saves, Esc cancels";
  } else {
    input = document.createElement("input");
    input.type = "text";
    input.value = editText(before, property);
    if (property.type === "date") input.placeholder = "2024-05-01T12:00:00.000 (UTC)";
    if (property.optional) input.placeholder = (input.placeholder ? input.placeholder + "; " : "") + "empty: nil";
    if (property.type === "string" || /^int/.test(property.type)) suggestValues(input, property);
  }
  input.setAttribute("aria-label", `${property.name} of ${state.type} ${object.key}`);
  cell.classList.add("editing");
  cell.classList.remove("failed");
  cell.replaceChildren(input);
  input.focus();
  if (input.select) input.select();
  let done = false;
  const finish = async (save) => {
    if (done) return;
    done = true;
    if (!save) { cell.classList.remove("editing"); fillCell(cell, before, property, state.type, object.key); return; }
    const value = parseInput(input.value, property);
    try {
      const updated = await api(`${typePath(state.type)}/objects/${enc(object.key)}`, {
        method: "PATCH", body: JSON.stringify({ property: property.name, value }),
      });
      object.values = updated.values;
      cell.classList.remove("editing");
      fillCell(cell, updated.values[column], property, state.type, object.key);
      toast(`${state.type} ${object.key}: ${property.name} saved`);
    } catch (error) {
      cell.classList.remove("editing");
      cell.classList.add("failed");
      fillCell(cell, before, property, state.type, object.key);
      toast(error.message, true);
    }
  };
  input.addEventListener("keydown", (event) => {
    const multiline = input.tagName === "TEXTAREA";
    if (event.key === "Enter" && (!multiline || event.ctrlKey || event.metaKey)) { event.preventDefault(); finish(true); }
    if (event.key === "Escape") { event.preventDefault(); finish(false); }
  });
  input.addEventListener("blur", () => finish(false));
  if (input.tagName === "SELECT") input.addEventListener("change", () => finish(true));
}

/// An enum stored as its raw value (a string or an integer): the values the
/// column already holds, offered as you type.
async function suggestValues(input, property) {
  try {
    const chart = await api(`${typePath(state.type)}/chart/${enc(property.name)}`);
    if (chart.kind !== "counts" || chart.values.length === 0 || chart.values.length > 20 || chart.others > 0) return;
    const list = document.createElement("datalist");
    list.id = `values-${property.name}`;
    for (const entry of chart.values) list.append(new Option(entry.value));
    input.after(list);
    input.setAttribute("list", list.id);
  } catch (error) { /* suggestions are a help, not a need */ }
}

// MARK: Adding and deleting

function showCreate() {
  const type = state.type;
  const schema = schemaOf(type);
  const form = document.createElement("form");
  const fields = [];
  for (const property of schema.properties) {
    if (property.collection || property.embedded || property.type === "mixed" || property.type === "data") continue;
    const label = document.createElement("label");
    const name = document.createElement("span");
    name.textContent = property.name;
    const kind = document.createElement("span");
    kind.className = "t";
    kind.textContent = ` ${property.typeDescription}${property.primaryKey ? " · primary key" : ""}`;
    name.append(kind);
    let input;
    if (property.type === "bool") {
      input = document.createElement("select");
      for (const option of ["false", "true"]) input.append(new Option(option, option));
    } else {
      input = document.createElement("input");
      input.placeholder = property.optional ? "empty: nil" : (property.type === "date" ? "2024-05-01T12:00:00Z" : "default");
    }
    input.name = property.name;
    label.append(name, input);
    form.append(label);
    fields.push({ property, input });
  }
  const error = document.createElement("div");
  error.className = "error";
  const buttons = document.createElement("div");
  buttons.className = "buttons";
  const cancel = document.createElement("button");
  cancel.type = "button";
  cancel.textContent = "Cancel";
  cancel.addEventListener("click", closeModal);
  const add = document.createElement("button");
  add.type = "submit";
  add.textContent = `Add ${type}`;
  buttons.append(cancel, add);
  form.append(error, buttons);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const values = {};
    for (const { property, input } of fields) {
      if (input.value === "" && !property.optional) continue;   // the default
      values[property.name] = parseInput(input.value, property);
    }
    try {
      const created = await api(`${typePath(type)}/objects`, { method: "POST", body: JSON.stringify(values) });
      closeModal();
      toast(`${type} ${created.key} added`);
      await loadTypes();
      reload(true);
    } catch (failure) {
      error.textContent = failure.message;
    }
  });
  openModal(`New ${type}`, form);
  const first = form.querySelector("input, select");
  if (first) first.focus();
}

async function deleteObject(type, key) {
  if (!confirm(`Delete ${type} ${key}? This cannot be undone.`)) return;
  try {
    await api(`${typePath(type)}/objects/${enc(key)}`, { method: "DELETE" });
    toast(`${type} ${key} deleted`);
    await loadTypes();
    reload(true);
  } catch (error) {
    toast(error.message, true);
  }
}

// MARK: Links, lists and who links here

async function openRelated(type, key, property, title) {
  $("drawer").hidden = false;
  $("drawer-title").textContent = title;
  const body = $("drawer-body");
  body.replaceChildren(span("nil", "loading…"));
  try {
    const related = await api(`${typePath(type)}/objects/${enc(key)}/${enc(property.name)}?limit=200`);
    const nodes = [];
    if (related.objects) {
      if (related.objects.length === 0) nodes.push(span("nil", property.type === "link" && !property.collection ? "nil" : "empty"));
      for (const object of related.objects) nodes.push(objectCard(object.type || related.type, object));
      if (related.total > related.objects.length) nodes.push(span("nil", `… and ${related.total - related.objects.length} more`));
    } else {
      const card = document.createElement("div");
      card.className = "card";
      const table = document.createElement("table");
      const element = Object.assign({}, property, { collection: null });
      for (const entry of related.entries) {
        const row = table.insertRow();
        row.insertCell().textContent = related.kind === "map" ? entry.key : `[${entry.key}]`;
        const value = entry.value;
        if (value && value.$link !== undefined) {
          // A map's link: open the object it points at.
          const link = span("link", `${value.$link} ${value.label !== undefined ? value.label : "#" + value.key}`);
          link.addEventListener("click", () => openObject(value.$link, value.key));
          row.insertCell().append(link);
        } else {
          row.insertCell().append(...valueNodes(value, element, type, key));
        }
      }
      card.append(table);
      nodes.push(card);
      if (related.entries.length === 0) nodes.push(span("nil", "empty"));
    }
    body.replaceChildren(...nodes);
  } catch (error) {
    body.replaceChildren(span("nil", error.message));
  }
}

/// One object in the side panel.
async function openObject(type, key) {
  $("drawer").hidden = false;
  $("drawer-title").textContent = `${type} ${key}`;
  try {
    $("drawer-body").replaceChildren(objectCard(type, await api(`${typePath(type)}/objects/${enc(key)}`)));
  } catch (error) {
    $("drawer-body").replaceChildren(span("nil", error.message));
  }
}

/// One object as a card of its values; its links and collections open in turn.
function objectCard(type, object) {
  const schema = schemaOf(type);
  const card = document.createElement("div");
  card.className = "card";
  const title = document.createElement("h3");
  title.textContent = `${type} ${object.key}`;
  if (!schema.embedded && schema.primaryKey) {
    const show = span("link show", "show in grid");
    const keyColumn = schema.properties.findIndex((p) => p.name === schema.primaryKey);
    show.addEventListener("click", () => {
      const value = object.values[keyColumn];
      const literal = typeof value === "string" ? `'${value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'` :
        (value && value.$uuid ? `uuid(${value.$uuid})` : value && value.$oid ? `oid(${value.$oid})` : String(value));
      selectType(type, `${schema.primaryKey} == ${literal}`);
    });
    title.append(show);
  }
  card.append(title);
  const table = document.createElement("table");
  schema.properties.forEach((property, column) => {
    const row = table.insertRow();
    row.insertCell().textContent = property.name;
    const cell = row.insertCell();
    const value = object.values[column];
    if (value && value.$data !== undefined && value.image) {
      const image = document.createElement("img");
      image.alt = property.name;
      image.src = `${typePath(type)}/objects/${enc(object.key)}/${enc(property.name)}/data?token=${enc(token)}`;
      image.addEventListener("error", () => image.remove());
      cell.append(image, document.createElement("br"));
    }
    cell.append(...valueNodes(value, property, type, object.key));
  });
  card.append(table);
  return card;
}

// MARK: Schema diagram

async function showSchema() {
  await loadSchema();
  const types = [...state.schema.values()];
  const width = 230, line = 18, gap = 60, perRow = Math.max(1, Math.min(4, Math.ceil(Math.sqrt(types.length))));
  const boxes = new Map();
  let rowTop = 20, rowHeight = 0;
  types.forEach((type, index) => {
    const column = index % perRow;
    if (column === 0 && index > 0) { rowTop += rowHeight + gap; rowHeight = 0; }
    const height = line * (type.properties.length + 1) + 10;
    boxes.set(type.name, { x: 20 + column * (width + gap), y: rowTop, height, type });
    rowHeight = Math.max(rowHeight, height);
  });
  const svgWidth = 20 + perRow * (width + gap), svgHeight = rowTop + rowHeight + 20;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("width", svgWidth);
  svg.setAttribute("height", svgHeight);
  svg.setAttribute("viewBox", `0 0 ${svgWidth} ${svgHeight}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "Schema diagram");
  const defs = document.createElementNS(ns, "defs");
  defs.innerHTML = '<marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#2563eb"/></marker>';
  svg.append(defs);
  const add = (name, attributes, text) => {
    const element = document.createElementNS(ns, name);
    for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
    if (text !== undefined) element.textContent = text;
    svg.append(element);
    return element;
  };
  for (const box of boxes.values()) {
    add("rect", { x: box.x, y: box.y, width, height: box.height, rx: 6, fill: "#fff", stroke: "#9ca3af" });
    add("rect", { x: box.x, y: box.y, width, height: line + 4, rx: 6, fill: "#111827" });
    add("text", { x: box.x + 8, y: box.y + 15, fill: "#fff", "font-weight": "700", "font-size": 13, class: "type-name" }, box.type.name);
    box.type.properties.forEach((property, index) => {
      const y = box.y + line * (index + 2);
      add("text", { x: box.x + 8, y, "font-size": 12, fill: property.primaryKey ? "#b45309" : "#111827" }, property.name);
      add("text", { x: box.x + width - 8, y, "font-size": 11, fill: "#6b7280", "text-anchor": "end" }, property.typeDescription);
    });
  }
  for (const box of boxes.values()) {
    box.type.properties.forEach((property, index) => {
      if (!property.objectType || property.collection === "linkingObjects") return;
      const target = boxes.get(property.objectType);
      if (!target) return;
      const fromY = box.y + line * (index + 2) - 4;
      const leftward = target.x + width / 2 < box.x;
      const fromX = leftward ? box.x : box.x + width;
      const toX = target === box ? box.x + width : (target.x > box.x ? target.x : target.x + width);
      const toY = target.y + 10;
      const bend = target === box ? 40 : 0;
      add("path", {
        d: `M${fromX},${fromY} C${fromX + (leftward ? -40 : 40) + bend},${fromY} ${toX + (target.x > box.x ? -40 : 40) + bend},${toY} ${toX},${toY}`,
        fill: "none", stroke: "#2563eb", "stroke-width": 1.5, "marker-end": "url(#arrow)",
        "stroke-dasharray": property.embedded ? "4 3" : "",
      });
    });
  }
  const note = document.createElement("p");
  note.textContent = "Arrows: links and collections of links (dashed: embedded objects). Orange: primary keys.";
  openModal("Schema", svg, note);
}

// MARK: Charts

async function showChart(property) {
  try {
    const filter = state.filter.trim() ? `?filter=${enc(state.filter)}` : "";
    const chart = await api(`${typePath(state.type)}/chart/${enc(property.name)}${filter}`);
    const bars = chart.kind === "histogram"
      ? chart.buckets.map((b) => ({ label: chart.date ? formatDate(new Date(b.from * 1000).toISOString()).slice(0, 16) : shortNumber(b.from), count: b.count }))
      : chart.values.map((v) => ({ label: v.value === "" ? "(empty)" : v.value, count: v.count }));
    if (chart.nulls) bars.push({ label: "nil", count: chart.nulls });
    if (chart.others) bars.push({ label: "others", count: chart.others });
    const ns = "http://www.w3.org/2000/svg";
    const barHeight = 22, labelWidth = 170, plotWidth = 420, height = Math.max(1, bars.length) * barHeight + 20;
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("width", labelWidth + plotWidth + 80);
    svg.setAttribute("height", height);
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", `Chart of ${property.name}`);
    const most = Math.max(1, ...bars.map((b) => b.count));
    bars.forEach((bar, index) => {
      const y = 10 + index * barHeight;
      const text = document.createElementNS(ns, "text");
      text.setAttribute("x", labelWidth - 8); text.setAttribute("y", y + 15);
      text.setAttribute("text-anchor", "end"); text.setAttribute("font-size", 12);
      text.textContent = bar.label.length > 24 ? bar.label.slice(0, 23) + "…" : bar.label;
      const rect = document.createElementNS(ns, "rect");
      rect.setAttribute("x", labelWidth); rect.setAttribute("y", y + 3);
      rect.setAttribute("width", Math.max(1, (bar.count / most) * plotWidth)); rect.setAttribute("height", barHeight - 6);
      rect.setAttribute("fill", bar.label === "nil" ? "#9ca3af" : "#2563eb");
      rect.setAttribute("class", "bar");
      const count = document.createElementNS(ns, "text");
      count.setAttribute("x", labelWidth + (bar.count / most) * plotWidth + 6); count.setAttribute("y", y + 15);
      count.setAttribute("font-size", 12);
      count.textContent = bar.count.toLocaleString("en-US");
      svg.append(text, rect, count);
    });
    const note = document.createElement("p");
    note.textContent = chart.kind === "histogram" ? `Histogram of ${property.name} (20 equal ranges)` : `Objects per value of ${property.name}`;
    openModal(`${state.type}.${property.name}`, svg, note);
  } catch (error) {
    toast(error.message, true);
  }
}

function shortNumber(value) { return Math.abs(value) >= 1e6 || (Math.abs(value) < 1e-3 && value !== 0) ? value.toExponential(2) : String(Math.round(value * 1000) / 1000); }

// MARK: Verify

async function runVerify() {
  try {
    const report = await api("/api/verify");
    const text = document.createElement("pre");
    text.textContent = report.valid
      ? `Sound: ${report.pages} pages, ${report.objects} objects and ${report.indexEntries} index entries checked.`
      : `${report.problems.length} problem(s):\n` + report.problems.map((p) => `${p.type}: ${p.kind}: ${p.detail}`).join("\n");
    openModal("Verify", text);
  } catch (error) {
    toast(error.message, true);
  }
}

// MARK: Live: commits from any process

function listen() {
  const events = new EventSource(`/api/events?token=${enc(token)}`);
  let timer = null;
  events.addEventListener("hello", () => { $("live").classList.remove("off"); });
  events.addEventListener("commit", () => {
    $("live").classList.add("flash");
    setTimeout(() => $("live").classList.remove("flash"), 300);
    // Several commits in a burst: one refresh.
    clearTimeout(timer);
    timer = setTimeout(refreshAfterCommit, 20);
  });
  events.addEventListener("error", () => { $("live").classList.add("off"); });
}

async function refreshAfterCommit() {
  try {
    const before = JSON.stringify(schemaOf(state.type));
    await Promise.all([loadSchema(), loadTypes()]);
    if (JSON.stringify(schemaOf(state.type)) !== before) { clearRows(); buildHeader(); }
    if (state.type && !document.querySelector(".cell.editing")) await reload(true);
  } catch (error) {
    toast(error.message, true);
  }
}

// MARK: Small parts

function showQueryError(error) {
  const text = state.filter;
  let message = error.message;
  if (typeof error.position === "number") {
    const characters = Array.from(text);
    const caret = " ".repeat(Math.min(error.position, characters.length)) + "^";
    message = `${text}\n${caret}\n${error.message}`;
    const input = $("filter");
    const offset = characters.slice(0, error.position).join("").length;
    input.focus();
    input.setSelectionRange(offset, offset + 1);
  }
  $("query-error-text").textContent = message;
  $("query-error").hidden = false;
}

function hideQueryError() { $("query-error").hidden = true; }

function setStatus(text) { $("status").textContent = text; }

function openModal(title, ...nodes) {
  $("modal-title").textContent = title;
  $("modal-body").replaceChildren(...nodes);
  $("modal").hidden = false;
}

function closeModal() { $("modal").hidden = true; }

let toastTimer = null;
function toast(message, bad = false) {
  const element = $("toast");
  element.textContent = message;
  element.classList.toggle("bad", bad);
  element.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { element.hidden = true; }, bad ? 6000 : 2500);
}
