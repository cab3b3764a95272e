// The courier app (an installable PWA at /app/): sign in, shift, the run in order, status moves
// with idempotency keys, proof photos through the presigned PUT, GPS while on shift; moves and
// fixes wait in IndexedDB (outbox.js) while there is no signal. A client of the JSON API only.
import {Api, ApiError, idempotencyKey} from "/static/js/api.js";
import {amd, applyTexts, initialLanguage, rememberLanguage, timeOf} from "/static/js/i18n.js";
import {TEXTS} from "/app/texts.js";
import {outbox} from "/app/outbox.js";
import {decode, startScanning} from "/app/scan.js";
import {openEventStream} from "/static/js/events.js";
import {loadMapLibre, mapLocale, relabelMap} from "/static/js/maplibre.js";

const $ = (id) => document.getElementById(id);
let lang = initialLanguage();
let T = TEXTS[lang];
let stopMap = null;  // the stop's map (its dialog), made the first time it opens
// MapLibre's controls and the markers in the app's language; the canvas is named as the map region.
const stopMapLocale = () => mapLocale(Object.assign({}, T, {map: T.stopMapLabel}));
const markerLabels = () => ({courier: T.markerCourier, destination: T.markerDestination});
let me = null;        // GET /courier/me: profile, shift, location
let run = [];         // GET /courier/orders, in run order
let pending = [];     // queued moves (outbox), shown on their orders; a refused one stays (needs attention)
let runChanges = 0;   // moves and shift changes the server accepted: a run fetched before one is stale
let watch = null;
let poll = null;
let lastFix = null;
let flushing = false;
let stream = null;     // GET /courier/events: the courier's own assignments and orders, as they change
let cause = "open";    // what made the current refresh: "open", "stream", "poll", a tab…
const arrived = new Map();  // order id -> what brought it on screen first (data-arrived-by)

// An installed app must stay signed in across restarts, so the refresh token (what the API needs
// back to rotate the session) is kept in localStorage; the access token stays in memory.
const api = new Api({
  storage: localStorage,
  key: "appliance.courier.session",
  onSession: (session) => showSession(session),
  onSignedOut: () => showSignIn(),
});

function toast(text) {
  const element = $("toast");
  element.textContent = text;
  element.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { element.hidden = true; }, 4000);
}

function explain(error) {
  if (error && error.offline) { return T.offline; }
  if (error instanceof ApiError) { return T.failed + (error.problem.detail || error.problem.title || error.status); }
  return T.failed + String(error);
}

function applyLanguage() {
  T = TEXTS[lang];
  applyTexts(document, T, lang);
  document.title = T.title;
  if (api.session) { $("company-name").textContent = api.session.company.name; }
  renderNet(); renderShift(); renderRun();
  if (stopMap) { relabelMap(stopMap.map, stopMapLocale()); stopMap.setLabels(markerLabels()); }
}

document.querySelectorAll("[data-lang]").forEach((button) => button.addEventListener("click", () => {
  lang = button.dataset.lang;
  rememberLanguage(lang);
  applyLanguage();
  if (api.session) { api.patch("/me", {language: lang}).catch(() => {}); }
}));

// ---- session -------------------------------------------------------------------------------

function showSignIn(message) {
  stopGps();
  document.body.dataset.view = "signin";
  $("main").hidden = true;
  $("signin").hidden = false;
  $("signin-message").textContent = message || "";
}

let shownUser = null;
function showSession(session) {
  if (session.role !== "courier") {
    showSignIn(T.notCourier + location.origin + "/console/");
    return;
  }
  if (shownUser !== session.user.id) {
    shownUser = session.user.id;
    if (session.user.language && TEXTS[session.user.language]) { lang = session.user.language; rememberLanguage(lang); }
    $("signin").hidden = true;
    $("main").hidden = false;
    document.body.dataset.view = "app";
    applyLanguage();
    refresh();
    listen();
  }
  document.documentElement.style.setProperty("--brand", session.company.brandColor || "#1F6FEB");
  $("company-name").textContent = session.company.name;
}

$("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("signin-submit").disabled = true;
  try {
    await api.signIn($("signin-email").value.trim(), $("signin-password").value);
    $("signin-password").value = "";
    if (document.body.dataset.view === "app") { $("company-name").focus(); }  // the page's first heading
  } catch (error) {
    $("signin-message").textContent = error.status === 401 ? T.wrongPassword : explain(error);
  } finally { $("signin-submit").disabled = false; }
});

$("sign-out").addEventListener("click", async () => {
  if (stream) { stream.close(); stream = null; }
  await api.signOut();
  await outbox.clear();  // a signed-out phone keeps nothing of the courier's
  localStorage.removeItem("appliance.courier.run");
  shownUser = null;
});

// ---- what the server says ------------------------------------------------------------------

// A new assignment reaches the courier at once over the stream (the 30 s look is the fallback).
function listen() {
  if (stream) { stream.close(); }
  stream = openEventStream(api, {
    path: "/courier/events",
    onEvent: () => { cause = "stream"; clearTimeout(listen.timer); listen.timer = setTimeout(refresh, 200); },
    onState: (state) => { document.body.dataset.stream = state; if (state === "signed-out") { stream = null; } },
  });
}

async function refresh() {
  try {
    const changes = runChanges;
    const [profile, orders] = await Promise.all([api.get("/courier/me"), api.get("/courier/orders")]);
    me = profile.courier || profile;
    me.dispatchPhone = profile.dispatchPhone || null;
    // A move accepted while this was on its way (the queue flushing as the signal returns) is newer
    // than what came back: fetch again rather than show a delivered order once more.
    if (changes !== runChanges) { return refresh(); }
    run = orders.orders;
    keepRun();
  } catch (error) {
    if (!error.offline) { toast(explain(error)); }
  }
  pending = await outbox.moves();
  renderShift(); renderRun(); syncGps(); renderQueue();
  cause = "poll";
}

// The last known profile and run, shown when the app opens without signal (no secrets in it).
function keepRun() {
  try { localStorage.setItem("appliance.courier.run", JSON.stringify({me: me, run: run})); } catch (e) { /* storage full or off */ }
}

function shiftStatus() { return me && me.shift ? me.shift.status : "off"; }

function renderShift() {
  if (!me) { return; }
  const status = shiftStatus();
  document.body.dataset.shift = status;
  $("shift-state").textContent = status === "active" ? T.shiftActive : status === "on_break" ? T.shiftBreak : T.shiftOff;
  $("shift-start").hidden = status !== "off";
  $("shift-break").hidden = status === "off";
  $("shift-end").hidden = status === "off";
  $("shift-break").textContent = status === "on_break" ? T.breakEnd : T.breakStart;
  $("gps-state").textContent = watch !== null ? T.gpsOn : T.gpsOff;
}

async function shift(path) {
  try {
    const {shift: changed} = await api.post("/courier/shift/" + path);
    // A profile on its way since before this change is stale: a refresh in flight fetches again.
    runChanges += 1;
    // Tapped before the first profile came back (a slow signal): the refresh shows the new shift.
    if (!me) { await refresh(); return; }
    me.shift = changed.status === "ended" ? null : changed;
    keepRun();
  } catch (error) { toast(explain(error)); }
  renderShift(); syncGps();
}
$("shift-start").addEventListener("click", () => shift("start"));
$("shift-break").addEventListener("click", () => shift("break"));
$("shift-end").addEventListener("click", () => shift("end"));

function address(order) {
  return (lang === "ru" && order.addressLabelRu) || (lang === "en" && order.addressLabelEn) || order.addressLabelHy;
}

const NEXT = {assigned: [["picked_up", "pickedUp"]], picked_up: [["arrived", "arrived"], ["delivered", "delivered"], ["failed", "failedMove"]],
              arrived: [["delivered", "delivered"], ["failed", "failedMove"]]};

// A move the server refused for good stays in the outbox, marked refused, until it is resolved: a
// new move of the same order goes through (the right code), or the order left the run (the
// dispatcher resolved it) and the courier says so. Its cash stays counted as in the courier's hands.
function refusedOf(orderId) { return pending.filter((m) => m.refused && m.orderId === orderId); }
function heldUnrecorded() { return pending.filter((m) => m.refused).reduce((sum, m) => sum + (m.body.collectedAmountAmd || 0), 0); }

function attentionBox(move) {
  const box = document.createElement("div");
  box.className = "attention";
  box.dataset.attentionReason = move.refused.reason;
  const title = document.createElement("p");
  title.className = "warning";
  title.textContent = T.needsAttention + " " + move.refused.reason;
  box.append(title);
  if (move.body.collectedAmountAmd) {
    const held = document.createElement("p");
    held.className = "small"; held.dataset.held = String(move.body.collectedAmountAmd);
    held.textContent = T.heldCash + amd(move.body.collectedAmountAmd, lang);
    box.append(held);
  }
  const advice = document.createElement("p");
  advice.className = "small muted";
  advice.textContent = move.refused.reported ? T.dispatcherSees : T.willTell;
  box.append(advice);
  if (me && me.dispatchPhone) {
    const call = document.createElement("a");
    call.href = "tel:" + me.dispatchPhone; call.dataset.callDispatcher = move.orderId;
    call.textContent = T.callDispatcher;
    box.append(call);
  }
  return box;
}

let renderedRun = null;
function renderRun() {
  const list = $("run");
  if (!list) { return; }
  // Rebuilt only when what it shows changed. The queue is flushed every 5 s and ends by rendering;
  // a tap that spans the swap of its button for an identical new one is lost (pressed on the old,
  // released on the new: no click), which a courier saw as a button that did nothing.
  const shown = JSON.stringify([lang, run, pending, me && me.dispatchPhone], (key, value) => (key === "photo" || key === "signature" ? undefined : value));
  if (shown === renderedRun) { return; }
  renderedRun = shown;
  const inRun = new Set(run.map((o) => o.id));
  // Refused moves of orders no longer in the run (the dispatcher resolved them): kept on screen
  // until the courier confirms it is settled.
  const orphans = pending.filter((m) => m.refused && !inRun.has(m.orderId)).map((move) => {
    const li = document.createElement("li");
    li.dataset.orderId = move.orderId; li.dataset.attention = "true"; li.dataset.status = "";
    const title = document.createElement("h3");
    title.textContent = move.publicId || move.orderId;
    const settled = document.createElement("button");
    settled.type = "button"; settled.className = "big ghost"; settled.dataset.settled = move.orderId;
    settled.textContent = T.settled;
    settled.addEventListener("click", async () => { await outbox.dropMove(move.seq); pending = await outbox.moves(); renderRun(); renderQueue(); });
    li.append(title, attentionBox(move), settled);
    return li;
  });
  // A stop planned for a later day is not in the run until that day comes: the server lists it
  // from then on (issue 45, docs/courier-app.md), so the run is always today's.
  // Pick up all at the depot: every stop still waiting to be picked up, in one tap.
  const waiting = run.filter((order) => order.status === "assigned" && !pending.some((m) => movesOrder(m, order.id)));
  $("pick-up-all").hidden = waiting.length < 2;
  $("pick-up-scan").hidden = waiting.length < 1;
  $("pick-up-all").textContent = T.pickUpAll + " (" + waiting.length + ")";
  pickUpAll.orders = waiting;
  list.replaceChildren(...orphans, ...run.map((order, index) => stopItem(order, index)));
  $("no-run").hidden = run.length > 0;
}

// Whether queued ``move`` moves the order (a single move, or a pick-up of many at the depot).
function movesOrder(move, orderId) { return move.orderId === orderId || (move.orderIds || []).includes(orderId); }

function stopItem(order, index) {
  {
    const queued = pending.filter((m) => movesOrder(m, order.id) && !m.refused);
    const refused = refusedOf(order.id);
    const status = queued.length ? queued[queued.length - 1].body.status : order.status;
    const li = document.createElement("li");
    li.dataset.orderId = order.id;
    li.dataset.status = status;
    li.dataset.pending = String(queued.length > 0);
    li.dataset.attention = String(refused.length > 0);
    if (!arrived.has(order.id)) { arrived.set(order.id, cause); }
    li.dataset.arrivedBy = arrived.get(order.id);
    const title = document.createElement("h3");
    const seq = document.createElement("span");
    seq.className = "seq"; seq.textContent = String(order.sequence || index + 1);
    title.append(seq, order.publicId);
    const where = document.createElement("p");
    where.textContent = address(order);
    // At the door: entrance, floor, apartment, intercom, and the dispatcher's or shop's note.
    const door = document.createElement("p");
    door.className = "door"; door.dataset.door = order.id;
    const parts = order.addressDetails || {};
    door.textContent = ["entrance", "floor", "apartment", "intercom"].filter((k) => parts[k]).map((k) => T[k] + parts[k]).join(" · ");
    door.hidden = !door.textContent;
    const note = document.createElement("p");
    note.className = "note small"; note.dataset.note = order.id;
    note.textContent = order.noteToCourier ? T.noteToCourier + order.noteToCourier : "";
    note.hidden = !order.noteToCourier;
    // A parcel another courier handed over (POST /orders/{id}/reassign): who it came from.
    const handed = document.createElement("p");
    handed.className = "note small"; handed.dataset.handedOver = order.id;
    handed.textContent = order.handedOverFrom ? T.handedOverFrom + order.handedOverFrom.courierName : "";
    handed.hidden = !order.handedOverFrom;
    const who = document.createElement("p");
    who.className = "muted";
    who.textContent = order.recipientName;
    const details = [];
    if (order.deliveryWindowStart || order.deliveryWindowEnd) { details.push(timeOf(order.deliveryWindowStart, lang) + "–" + timeOf(order.deliveryWindowEnd, lang)); }
    if (order.isCod) { details.push(T.cod + amd(order.codAmountAmd, lang)); }
    const extra = document.createElement("p");
    extra.className = "small";
    extra.textContent = details.join(" · ");
    if (order.otpRequired) { const badge = document.createElement("span"); badge.className = "badge code"; badge.textContent = T.codeNeeded; extra.append(" ", badge); }
    const lockedNote = document.createElement("p");  // five wrong tries: only the dispatcher can make a new code
    lockedNote.className = "warning small"; lockedNote.dataset.codeLocked = order.id; lockedNote.textContent = T.locked;
    lockedNote.hidden = !order.deliveryCodeLocked;
    const links = document.createElement("p");
    links.className = "links";
    const geo = document.createElement("a");
    geo.href = "geo:" + order.pin.lat + "," + order.pin.lon + "?q=" + order.pin.lat + "," + order.pin.lon;
    geo.textContent = T.navigate;
    const mapLink = document.createElement("a");
    mapLink.href = "#"; mapLink.textContent = T.map; mapLink.dataset.map = order.id;
    mapLink.addEventListener("click", (event) => { event.preventDefault(); showMap(order); });
    const call = document.createElement("a");
    call.href = "tel:" + order.recipientPhone; call.textContent = T.call;
    links.append(geo, mapLink, call);
    li.append(title, where, door, note, handed, who, extra, lockedNote, links);
    if (refused.length) { li.append(attentionBox(refused[refused.length - 1])); }
    if (queued.length) {
      const wait = document.createElement("p");
      wait.className = "warning small";
      wait.textContent = T.queued + " · " + T.willSend;
      li.append(wait);
    } else {
      const row = document.createElement("div");
      row.className = "row";
      (NEXT[status] || []).forEach(([to, label]) => {
        const button = document.createElement("button");
        button.type = "button"; button.className = "big" + (to === "failed" ? " ghost" : "");
        button.dataset.move = to;
        button.textContent = refused.length && to === "delivered" && order.otpRequired ? T.enterCodeAgain : T[label];
        button.addEventListener("click", () => startMove(order, to));
        row.append(button);
      });
      li.append(row);
    }
    return li;
  }
}

// ---- moves ---------------------------------------------------------------------------------

let moving = null;
function startMove(order, status) {
  // The key is made when the courier decides, and travels with the move through every retry.
  moving = {order: order, key: idempotencyKey()};
  if (status === "delivered") {
    $("deliver-form").reset();
    $("deliver-error").textContent = "";
    $("deliver-order").textContent = order.publicId + " · " + address(order);
    $("d-name").value = order.recipientName;
    $("d-code-box").hidden = !order.otpRequired;
    $("d-code").required = order.otpRequired;
    $("d-cash-box").hidden = !order.isCod;
    // The proof the order needs (issue 47): the server refuses a delivery without it.
    const needs = order.proofRequired || [];
    $("d-scan-box").hidden = !needs.includes("scan");
    $("d-signature-box").hidden = !needs.includes("signature");
    $("d-age-box").hidden = !needs.includes("age");
    $("d-photo").required = needs.includes("photo");
    $("d-name").required = needs.includes("name") || !needs.length;
    signaturePad.clear();
    $("d-collected").value = order.isCod ? String(order.codAmountAmd) : "";
    const before = refusedOf(order.id).filter((m) => m.body.status === "delivered").pop();
    if (before) {  // entering the code again: what the courier wrote the first time stays
      $("d-name").value = before.body.recipientName || order.recipientName;
      $("d-notes").value = before.body.notes || "";
      if (before.body.collectedAmountAmd !== undefined) { $("d-collected").value = String(before.body.collectedAmountAmd); }
      $("deliver-error").textContent = before.refused.reason;
    }
    $("deliver-dialog").showModal();
  } else if (status === "failed") {
    $("fail-form").reset();
    $("fail-dialog").showModal();
  } else {
    queueMove(order, {status: status}, null);
  }
}
// At the depot: one tap marks every stop of today still assigned as picked up. Each is its own
// move through the outbox with its own idempotency key (the endpoint of a single pick-up), so
// without signal they wait and go out together, and a retry never moves one twice.
async function pickUpAll() {
  const orders = pickUpAll.orders || [];
  if (!orders.length) { return; }
  $("pick-up-all").disabled = true;
  try {
    await queuePickUp(orders.map((o) => o.id), []);
    renderRun(); renderQueue();
    toast(T.pickedUpAll.replace("{n}", String(orders.length)));
    flush();
  } finally { $("pick-up-all").disabled = false; }
}
$("pick-up-all").addEventListener("click", () => pickUpAll());

// One queued move picks many orders up (POST /courier/orders/pick-up, issue 47): by id, or by the
// codes scanned off the parcels. Each order's move on the server is its own, under this move's key
// and the order's id, so a batch resent after a lost answer moves none twice.
async function queuePickUp(orderIds, codes) {
  const known = new Set(orderIds);
  for (const code of codes) {
    const order = run.find((o) => o.externalRef === code || o.publicId.toUpperCase() === code.toUpperCase());
    if (order) { known.add(order.id); }
  }
  await outbox.addMove({kind: "pickUp", orderIds: [...known], explicitIds: orderIds, codes: codes, body: {status: "picked_up", idempotencyKey: idempotencyKey(), occurredAt: new Date().toISOString()},
                        photo: null, photoKey: null, queuedAt: new Date().toISOString()});
  pending = await outbox.moves();
}

// ---- the camera: parcel codes ------------------------------------------------------------------

let stopCamera = null;
let scanned = [];
async function openScanner(onCode, depot) {
  scanned = [];
  $("scan-list").replaceChildren();
  $("scan-done").hidden = !depot;
  $("scan-status").textContent = T.scanning;
  $("scan-dialog").showModal();
  try {
    stopCamera = await startScanning($("scan-video"), onCode);
  } catch (error) { $("scan-status").textContent = T.noCamera; }
}
function closeScanner() {
  if (stopCamera) { stopCamera(); stopCamera = null; }
  if ($("scan-dialog").open) { $("scan-dialog").close(); }
}
$("scan-dialog").addEventListener("close", () => { if (stopCamera) { stopCamera(); stopCamera = null; } });
$("scan-close").addEventListener("click", closeScanner);

// At the door: the parcel's code fills the field, and the camera closes.
$("d-scan-camera").addEventListener("click", () => openScanner((text) => { $("d-scan").value = text; closeScanner(); }, false));

// At the depot: each parcel scanned is listed (once); "pick up the scanned" sends them together.
function depotCode(text) {
  if (scanned.includes(text)) { return; }
  scanned.push(text);
  const order = run.find((o) => o.externalRef === text || o.publicId.toUpperCase() === text.toUpperCase());
  const li = document.createElement("li");
  li.dataset.scanned = text;
  li.textContent = order ? order.publicId + " · " + address(order) : T.notInRun + text;
  $("scan-list").append(li);
}
$("pick-up-scan").addEventListener("click", () => openScanner(depotCode, true));
$("scan-done").addEventListener("click", async () => {
  const codes = scanned.slice();
  closeScanner();
  if (!codes.length) { return; }
  await queuePickUp([], codes);
  renderRun(); renderQueue();
  flush();
});

// ---- the recipient's signature ------------------------------------------------------------------

// Drawn with a finger on a canvas (a few lines, no library): a PNG of the strokes goes with the move.
const signaturePad = (() => {
  const canvas = $("d-signature");
  const pen = canvas.getContext("2d");
  let drawing = false, signed = false;
  const at = (event) => {
    const box = canvas.getBoundingClientRect();
    return [(event.clientX - box.left) * canvas.width / box.width, (event.clientY - box.top) * canvas.height / box.height];
  };
  canvas.addEventListener("pointerdown", (event) => {
    drawing = true; canvas.setPointerCapture(event.pointerId);
    pen.lineWidth = 3; pen.lineCap = "round"; pen.lineJoin = "round"; pen.strokeStyle = "#101828";
    pen.beginPath(); pen.moveTo(...at(event));
  });
  canvas.addEventListener("pointermove", (event) => {
    if (!drawing) { return; }
    pen.lineTo(...at(event)); pen.stroke(); signed = true;
  });
  const end = () => { drawing = false; };
  canvas.addEventListener("pointerup", end);
  canvas.addEventListener("pointercancel", end);
  return {
    get signed() { return signed; },
    clear() { pen.clearRect(0, 0, canvas.width, canvas.height); signed = false; },
    blob() { return new Promise((resolve) => canvas.toBlob(resolve, "image/png")); },
  };
})();
$("d-signature-clear").addEventListener("click", () => signaturePad.clear());
$("deliver-close").addEventListener("click", () => $("deliver-dialog").close());
$("fail-close").addEventListener("click", () => $("fail-dialog").close());

$("deliver-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const order = moving.order;
  const body = {status: "delivered", recipientName: $("d-name").value.trim() || null, notes: $("d-notes").value.trim() || null};
  if (order.otpRequired) { body.otpCode = $("d-code").value.trim(); }
  if (order.isCod && $("d-collected").value !== "") { body.collectedAmountAmd = parseInt($("d-collected").value, 10); }
  const file = $("d-photo").files[0];
  const needs = order.proofRequired || [];
  // What the server would refuse, said here (it still checks: a queued move may wait for signal).
  const scan = $("d-scan").value.trim();
  const matches = !scan || scan === order.externalRef || scan.toUpperCase() === order.publicId.toUpperCase();
  const lacking = needs.includes("photo") && !file ? T.needsPhoto
    : needs.includes("signature") && !signaturePad.signed ? T.needsSignature
      : needs.includes("scan") && !scan ? T.needsScan
        : !matches ? T.wrongParcel
          : needs.includes("age") && !$("d-age").checked ? T.needsAge : "";
  if (lacking) { $("deliver-error").textContent = lacking; return; }
  if (scan) { body.scannedCode = scan; }
  if ($("d-age").checked) { body.ageChecked = true; }
  const signature = signaturePad.signed ? await signaturePad.blob() : null;
  const photo = file ? await shrink(file) : null;
  $("deliver-dialog").close();
  queueMove(order, body, photo, signature);
});

$("fail-form").addEventListener("submit", (event) => {
  event.preventDefault();
  $("fail-dialog").close();
  queueMove(moving.order, {status: "failed", failureReason: $("f-reason").value, notes: $("f-notes").value.trim() || null}, null);
});

// Phone photos are large and may be HEIC: redraw as a JPEG of at most 1600 px, which the upload
// link accepts and a weak connection carries.
async function shrink(file) {
  try {
    const bitmap = await createImageBitmap(file);
    const scale = Math.min(1, 1600 / Math.max(bitmap.width, bitmap.height));
    const canvas = document.createElement("canvas");
    canvas.width = Math.round(bitmap.width * scale); canvas.height = Math.round(bitmap.height * scale);
    canvas.getContext("2d").drawImage(bitmap, 0, 0, canvas.width, canvas.height);
    return await new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", 0.85));
  } catch (error) {
    return ["image/jpeg", "image/png", "image/webp"].includes(file.type) ? file : null;
  }
}

async function queueMove(order, body, photo, signature) {
  await outbox.addMove({orderId: order.id, publicId: order.publicId, body: Object.assign(body, {idempotencyKey: moving.key, occurredAt: new Date().toISOString()}), photo: photo,
                        photoKey: null, signature: signature || null, signatureKey: null, queuedAt: new Date().toISOString()});
  pending = await outbox.moves();
  renderRun(); renderQueue();
  flush();
}

// Send what waits, oldest first: moves (a photo is uploaded first, once), then fixes in batches.
async function flush() {
  if (flushing || !api.session) { return; }
  flushing = true;
  try {
    for (const move of await outbox.moves()) {
      if (move.refused) {
        if (!move.refused.reported) { await reportRefused(move); }
        continue;
      }
      if (!(await sendMove(move))) { break; }
    }
    for (;;) {
      const points = await outbox.points(50);
      if (!points.length) { break; }
      try {
        await api.post("/courier/location", {points: points});
      } catch (error) {
        if (error.offline || !(error instanceof ApiError) || error.status >= 500 || error.status === 429 || error.status === 401) { break; }
        // 422: a batch the server will never take (outside the area): drop it rather than block the rest.
      }
      await outbox.dropPoints(points.map((p) => p.capturedAt));
    }
  } finally {
    flushing = false;
    pending = await outbox.moves();
    renderRun(); renderQueue();
  }
}

// A queued pick-up of many orders: one request; the orders the server refused are told, not kept.
async function sendPickUp(move) {
  try {
    const body = {orderIds: move.explicitIds || [], codes: move.codes, idempotencyKey: move.body.idempotencyKey, occurredAt: move.body.occurredAt};
    const answer = await api.post("/courier/orders/pick-up", body);
    await outbox.dropMove(move.seq);
    runChanges += 1;
    for (const result of answer.results) {
      const index = run.findIndex((o) => result.order && o.id === result.order.id);
      if (index >= 0) { run[index] = result.order; }
    }
    keepRun();
    const refused = answer.results.filter((r) => r.status !== 200).length;
    toast(refused ? T.pickUpRefused.replace("{n}", String(refused)) : T.pickedUpAll.replace("{n}", String(answer.pickedUp)));
    return true;
  } catch (error) {
    if (error.offline || error.status >= 500 || error.status === 429) { return false; }
    await outbox.dropMove(move.seq);  // a request the server will never take: nothing was moved
    toast(explain(error));
    return true;
  }
}

async function upload(orderId, blob, kind) {
  const type = kind === "signature" ? "image/png" : "image/jpeg";
  const link = await api.post("/courier/orders/" + orderId + "/proof/upload-url", {contentType: type, contentLength: blob.size, kind: kind});
  let put;
  try {
    put = await fetch(link.url, {method: "PUT", headers: {"Content-Type": type}, body: blob});
  } catch (error) { return null; }
  if (!put.ok) { throw new ApiError(put.status, {title: "upload " + put.status}); }
  return link.key;
}

async function sendMove(move) {
  if (move.kind === "pickUp") { return sendPickUp(move); }
  try {
    if (move.signature && !move.signatureKey) {  // uploaded once, like the photo
      const key = await upload(move.orderId, move.signature, "signature");
      if (key === null) { return false; }
      move.signatureKey = key;
      await outbox.updateMove(move);
    }
    if (move.photo && !move.photoKey) {
      const upload = await api.post("/courier/orders/" + move.orderId + "/proof/upload-url", {contentType: "image/jpeg", contentLength: move.photo.size});
      let put;
      try {
        put = await fetch(upload.url, {method: "PUT", headers: {"Content-Type": "image/jpeg"}, body: move.photo});
      } catch (error) { return false; }
      if (!put.ok) { throw new ApiError(put.status, {title: "upload " + put.status}); }
      move.photoKey = upload.key;
      await outbox.updateMove(move);
    }
    const body = Object.assign({}, move.body);
    if (move.photoKey) { body.photoKey = move.photoKey; }
    if (move.signatureKey) { body.signatureKey = move.signatureKey; }
    const answer = await api.post("/courier/orders/" + move.orderId + "/status", body);
    await outbox.dropMove(move.seq);
    // A move of the order went through: what was refused before is resolved by it.
    for (const old of await outbox.moves()) { if (old.refused && old.orderId === move.orderId) { await outbox.dropMove(old.seq); } }
    runChanges += 1;
    const index = run.findIndex((o) => o.id === answer.order.id);
    if (index >= 0 && ["delivered", "failed"].includes(answer.order.status)) { run.splice(index, 1); } else if (index >= 0) { run[index] = answer.order; }
    keepRun();
    toast(T.sent);
    return true;
  } catch (error) {
    if (error.offline || error.status >= 500 || error.status === 429) { return false; }
    // Refused for good (a wrong or locked code, a move no longer allowed). The courier may have
    // left with the cash: the move stays on screen as "needs attention" with the reason, and the
    // dispatcher is told (POST /courier/orders/{id}/attention), until it is resolved.
    const lacksProof = error.problem && error.problem.code === "proof_missing";  // said by the server, in the courier's language
    const reason = error.status === 423 ? T.locked : error.status === 422 && move.body.otpCode && !lacksProof ? T.wrongCode : explain(error);
    move.refused = {reason: reason, status: error.status, reported: false};
    await outbox.updateMove(move);
    await reportRefused(move);
    toast(reason);
    refresh();
    return true;
  }
}

async function reportRefused(move) {
  const held = move.body.status === "delivered" && move.body.collectedAmountAmd !== undefined ? move.body.collectedAmountAmd : null;
  try {
    await api.post("/courier/orders/" + move.orderId + "/attention", {move: move.body.status, reason: move.refused.reason, heldAmountAmd: held});
  } catch (error) {
    if (error.offline || !(error instanceof ApiError) || error.status >= 500 || error.status === 429 || error.status === 401) { return; }
    // 404/409: the order is no longer the courier's to move; the card stays until settled.
  }
  move.refused.reported = true;
  await outbox.updateMove(move);
}

async function renderQueue() {
  const counts = await outbox.counts();
  const refused = (await outbox.moves()).filter((m) => m.refused).length;
  const waiting = counts.moves - refused;
  document.body.dataset.queuedMoves = String(waiting);
  document.body.dataset.attentionMoves = String(refused);
  document.body.dataset.queuedPoints = String(counts.points);
  $("queue-state").textContent = waiting + counts.points ? (waiting + counts.points) + " " + T.queued : "";
}

// ---- GPS -----------------------------------------------------------------------------------

function syncGps() {
  if (shiftStatus() === "off") { stopGps(); } else { startGps(); }
  renderShift();
}

function onFix(position) {
  const capturedAt = new Date(position.timestamp || Date.now()).toISOString();
  if (lastFix === capturedAt) { return; }
  lastFix = capturedAt;
  $("gps-warning").hidden = true;
  outbox.addPoint({lat: position.coords.latitude, lon: position.coords.longitude, capturedAt: capturedAt,
                   accuracyM: position.coords.accuracy ? Math.round(position.coords.accuracy) : null, source: "browser"})
    .then(() => { renderQueue(); flush(); });
}

function onGpsError(error) { if (error.code === 1) { $("gps-warning").hidden = false; } }

function startGps() {
  if (watch !== null || !navigator.geolocation) { return; }
  const options = {enableHighAccuracy: true, maximumAge: 0, timeout: 20000};
  watch = navigator.geolocation.watchPosition(onFix, onGpsError, options);
  // A phone standing still reports nothing new: ask every 15 s so the dispatcher's fix stays fresh.
  poll = setInterval(() => navigator.geolocation.getCurrentPosition(onFix, onGpsError, options), 15000);
}

function stopGps() {
  if (watch !== null) { navigator.geolocation.clearWatch(watch); watch = null; }
  clearInterval(poll); poll = null;
}

// ---- network -------------------------------------------------------------------------------

function renderNet() {
  const net = $("net");
  net.dataset.online = String(navigator.onLine);
  net.textContent = navigator.onLine ? "" : T.offline;
}
window.addEventListener("online", () => { renderNet(); flush().then(refresh); });
window.addEventListener("offline", renderNet);
setInterval(flush, 5000);
// New assignments reach the courier on the next look: every 30 s while the run is on screen.
setInterval(() => { if (navigator.onLine && api.session && !$("tab-run").hidden && !flushing) { refresh(); } }, 30000);

// ---- map of a stop ---------------------------------------------------------------------------

async function showMap(order) {
  $("map-dialog").showModal();
  const view = {destination: order.pin, courier: me && me.location ? {lat: me.location.lat, lon: me.location.lon} : null};
  // MapLibre is fetched the first time a map is opened, not with the run.
  try { await loadMapLibre(); } catch (error) { toast(explain(error)); return; }
  if (!stopMap) {
    stopMap = new TrackingMap("stop-map", {destination: order.pin, locale: stopMapLocale(), labels: markerLabels()});
  } else { stopMap.map.resize(); }
  stopMap.update(view);
}

// ---- other tabs ------------------------------------------------------------------------------

document.querySelectorAll("[data-tab]").forEach((button) => button.addEventListener("click", () => showTab(button.dataset.tab)));

async function showTab(name) {
  document.querySelectorAll("[data-tab]").forEach((b) => b.setAttribute("aria-current", b.dataset.tab === name ? "page" : "false"));
  document.querySelectorAll("[data-tab-panel]").forEach((panel) => { panel.hidden = panel.dataset.tabPanel !== name; });
  try {
    if (name === "cash") { await showCash(); }
    if (name === "history") { await showHistory(); }
    if (name === "earnings") { await showEarnings(); }
    if (name === "profile" && !me) { await refresh(); }  // opened before the first profile came back
    if (name === "profile" && me) { $("p-name").value = me.displayName || ""; $("p-phone").value = me.phone || ""; $("p-vehicle").value = me.vehicleLabel || ""; }
    if (name === "run") { await refresh(); }
  } catch (error) { toast(explain(error)); }
}

function item(text) { const li = document.createElement("li"); li.textContent = text; return li; }

async function showCash() {
  const cash = await api.get("/courier/cash");
  $("cash-outstanding").textContent = T.outstanding + amd(cash.outstandingAmd, lang);
  // Cash of refused deliveries is in the courier's hands too, though not recorded yet: the phone's
  // own count (it includes what the server has not heard about).
  pending = await outbox.moves();
  const held = Math.max(heldUnrecorded(), cash.unrecordedAmd || 0);
  $("cash-unrecorded").hidden = !held;
  $("cash-unrecorded").textContent = held ? T.heldCash + amd(held, lang) : "";
  $("cash-open").textContent = cash.openSettlement ? T.awaiting + amd(cash.openSettlement.expectedAmd, lang) : "";
  $("cash-settle").disabled = !cash.outstandingAmd || Boolean(cash.openSettlement);
  $("cash-list").replaceChildren(...cash.recentCollections.map((c) => item(c.publicId + " · " + amd(c.amountAmd, lang) + " · " + timeOf(c.collectedAt, lang))));
}
$("cash-settle").addEventListener("click", async () => {
  try { await api.post("/courier/cash/settle"); await showCash(); } catch (error) { toast(explain(error)); }
});

async function showHistory() {
  const {history} = await api.get("/courier/history?limit=50");
  $("history-list").replaceChildren(...(history.length ? history.map((h) => item(
    h.publicId + " · " + T["status_" + h.status] + " · " + timeOf(h.at, lang) + (h.failureReason ? " · " + T[h.failureReason] : "") + (h.fiscalNumber ? " · " + T.fiscal + " " + h.fiscalNumber : ""))) : [item(T.nothing)]));
}

async function showEarnings() {
  const earnings = await api.get("/courier/earnings");
  $("earnings").replaceChildren(...[["today", T.today], ["week", T.week], ["allTime", T.allTime]].map(([key, label]) => {
    const p = document.createElement("p");
    const w = earnings[key];
    // The pay under the company's rule; the orders' value (the shop's money) apart (issue 46).
    const pay = w.payAmd === null || w.payAmd === undefined ? T.noPayRule : T.yourPay + " " + amd(w.payAmd, lang);
    p.textContent = label + ": " + w.delivered + " " + T.deliveries + " · " + pay + " · " + T.ordersValue + " " + amd(w.amountAmd, lang);
    return p;
  }));
}

$("profile-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const changes = {displayName: $("p-name").value.trim(), phone: $("p-phone").value.trim() || null, vehicleLabel: $("p-vehicle").value.trim() || null};
  try { const answer = await api.patch("/courier/me", changes); me = answer.courier || me; toast(T.saved); } catch (error) { toast(explain(error)); }
});

// ---- start ---------------------------------------------------------------------------------

async function boot() {
  applyLanguage();
  if ("serviceWorker" in navigator) { navigator.serviceWorker.register("/app/sw.js", {scope: "/app/"}).catch(() => {}); }
  let handed = null;  // a session left in this tab by /login (an emailed or member login link)
  try { handed = JSON.parse(sessionStorage.getItem("appliance.session") || "null"); } catch (e) { handed = null; }
  if (handed && handed.accessToken && handed.role === "courier") { sessionStorage.removeItem("appliance.session"); api.adopt(handed); return; }
  try {
    if (!(await api.resume())) { showSignIn(); }
  } catch (error) {
    // Offline with a kept session: show the last known run from this device until the signal returns.
    const kept = JSON.parse(localStorage.getItem("appliance.courier.run") || "null");
    if (kept && api.storedRefreshToken()) {
      me = kept.me; run = kept.run;
      $("signin").hidden = true; $("main").hidden = false; document.body.dataset.view = "app";
      pending = await outbox.moves();
      renderShift(); renderRun(); renderQueue();
      window.addEventListener("online", () => api.resume().catch(() => {}), {once: true});
    } else { showSignIn(explain(error)); }
  }
}
boot();
window.courierApp = {get run() { return run; }, get pending() { return pending; }, flush: flush, decode: decode};
