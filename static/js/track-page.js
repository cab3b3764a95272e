// The recipient's tracking page (/t/<token>). The server wrote the stage, the arrival estimate and
// the words of all three languages into the page (appliance/dispatch/tracking/page.py); this keeps
// them live (every 15 s), switches the language, draws the map when the recipient asks for it, and
// sends the rating.
import {loadMapLibre, mapLocale, relabelMap} from "/static/js/maplibre.js";

const $ = (id) => document.getElementById(id);
const token = decodeURIComponent(location.pathname.split("/").pop());
const data = JSON.parse(document.body.dataset.page);
const TEXTS = data.texts;
let lang = data.lang;
let T = TEXTS[lang];
let lastView = data.view;
let map = null;
let mapLoading = false;
// The map is made on request: MapLibre is 900 KiB of script and a WebGL canvas, seconds of a
// phone's CPU that would come before the page answers a tap (Lighthouse on a throttled phone:
// performance 70 with the map made at once). The stage and estimate above it need none of it. Its
// box keeps its space with a button; a recipient who opened it once on this device gets it again
// when its box comes into view (IntersectionObserver), without asking.
const MAP_KEY = "track-map";
let mapWanted = false;
try { mapWanted = localStorage.getItem(MAP_KEY) === "shown"; } catch (e) { /* storage off */ }
let mapInView = false;

function say(template, values) { return template.replace(/\{(\w+)\}/g, (whole, key) => (key in values ? String(values[key]) : whole)); }

// Deliveries happen in Armenia: times are Yerevan's whatever the phone's zone.
function time(iso) { return new Date(iso).toLocaleTimeString(lang, {hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: "Asia/Yerevan"}); }

// Set a live region's text only when it changes: a screen reader announces each change once.
function setText(element, text) { if (element.textContent !== text) { element.textContent = text; } }

function applyLanguage() {
  T = TEXTS[lang];
  document.documentElement.lang = lang;
  document.title = T.title;
  document.querySelectorAll("[data-t]").forEach((el) => { el.textContent = T[el.dataset.t]; });
  document.querySelectorAll("[data-t-label]").forEach((el) => el.setAttribute("aria-label", T[el.dataset.tLabel]));
  $("comment").placeholder = T.comment;
  $("comment").setAttribute("aria-label", T.comment);
  document.querySelectorAll("[data-lang]").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.lang === lang)));
  if (map) {
    map.setLabels({courier: T.markerCourier, destination: T.markerDestination});
    relabelMap(map.map, mapLocale(T));  // MapLibre's own buttons too, on the map already shown
  }
  if (lastView) { render(lastView); } else { gone(); }
}

function gone() {
  setText($("headline"), T.gone);
  setText($("eta"), "");
  document.body.dataset.stage = "gone";
  $("map").hidden = true;
}

function showMap(view) {
  if (map) { map.update(view); return; }
  if (!mapWanted || !mapInView || mapLoading) { return; }
  mapLoading = true;
  const button = $("map-show");
  button.dataset.t = "mapLoading"; button.textContent = T.mapLoading; button.disabled = true;
  loadMapLibre().then(() => {
    if (!lastView) { return; }  // the link went away meanwhile
    $("map-offer").remove();  // MapLibre fills the box itself
    map = new TrackingMap("map", {destination: lastView.destination, brandColor: lastView.company.brandColor, locale: mapLocale(T),
                                  labels: {courier: T.markerCourier, destination: T.markerDestination}});
    window.trackingMap = map;
    map.update(lastView);
  }).catch(() => {  // offered again: a tap, or the next refresh, tries again
    mapLoading = false;
    button.dataset.t = "showMap"; button.textContent = T.showMap; button.disabled = false;
  });
}

$("map-show").addEventListener("click", () => {
  mapWanted = true; mapInView = true;
  try { localStorage.setItem(MAP_KEY, "shown"); } catch (e) { /* storage off: asked again next time */ }
  if (lastView) { showMap(lastView); }
});

if (mapWanted) {
  new IntersectionObserver((entries, observer) => {
    if (!entries.some((entry) => entry.isIntersecting)) { return; }
    observer.disconnect();
    mapInView = true;
    if (lastView && !$("map").hidden) { showMap(lastView); }
  }).observe($("map"));
}

function render(view) {
  lastView = view;
  document.documentElement.style.setProperty("--brand", view.company.brandColor);
  document.body.dataset.stage = view.stage;
  document.body.dataset.state = view.state;
  setText($("company"), view.company.name);
  if (view.company.logoUrl) { $("logo").src = view.company.logoUrl; $("logo").hidden = false; }
  setText($("headline"), T[view.stage]);
  $("headline").dataset.stage = view.stage;
  const eta = $("eta");
  const onTheWay = view.state === "on_the_way" || view.state === "preparing";
  const win = view.deliveryWindow;
  if (onTheWay && win && win.start && win.end) {
    // The estimate against the window: "between 11:00 and 14:00, about 12:15".
    setText(eta, say(T.window, {start: time(win.start), end: time(win.end)}) + (view.expectedAt ? say(T.about, {time: time(view.expectedAt)}) : ""));
    eta.dataset.seconds = view.etaSeconds === null ? "" : String(view.etaSeconds);
  } else if (onTheWay && view.etaSeconds !== null) {
    // The road estimate plus the waits for earlier stops' windows (waitSeconds), as the server's page.
    setText(eta, say(T.eta, {minutes: Math.max(1, Math.round((view.etaSeconds + (view.waitSeconds || 0)) / 60))}));
    eta.dataset.seconds = String(view.etaSeconds);
  } else { setText(eta, ""); eta.dataset.seconds = ""; }
  const detail = [];
  if (view.stopsAhead !== null && view.state !== "delivered") { detail.push(say(T.stopsAhead, {count: view.stopsAhead})); }
  if (view.state === "failed" && view.failureReason) { detail.push(T.notDelivered + T[view.failureReason]); }
  setText($("detail"), detail.join(" · "));
  const line = $("courier-line");
  line.hidden = !view.courierName;
  line.replaceChildren();
  if (view.courierName) {
    line.append(T.courier + view.courierName);
    if (view.courierPhone) {
      const call = document.createElement("a");
      call.className = "call"; call.href = "tel:" + view.courierPhone; call.textContent = T.call;
      line.append(call);
    }
  }
  $("code-card").hidden = !view.otpCode;
  $("code").textContent = view.otpCode || "";
  const timeline = $("timeline");
  timeline.replaceChildren(...view.timeline.map((step) => {
    const li = document.createElement("li");
    li.textContent = T[step.stage] + " · " + time(step.at);
    return li;
  }));
  const receipt = $("receipt-card");
  receipt.hidden = !view.receipt;
  if (view.receipt) {
    receipt.replaceChildren();
    const address = view.receipt.address[lang] || view.receipt.address.hy || view.receipt.address.en;
    const rows = [[T.order, view.receipt.orderNumber], [T.address, address],
                  [T.payment, view.receipt.payment.method === "cash" ? new Intl.NumberFormat(lang).format(view.receipt.payment.amountAmd) + T.cash : T.prepaid]];
    if (view.receipt.fiscal) { rows.push([T.fiscal, view.receipt.fiscal.fiscalNumber || view.receipt.fiscal.receiptId]); }
    if (view.proof) {
      rows.push([T.deliveredAt, time(view.proof.deliveredAt) + (view.proof.receivedBy ? T.to + view.proof.receivedBy : "")]);
    }
    rows.forEach((row) => {
      const p = document.createElement("p");
      const b = document.createElement("strong"); b.textContent = row[0] + ": ";
      p.append(b, row[1]);
      receipt.append(p);
    });
    const qr = view.receipt.fiscal && view.receipt.fiscal.qr;
    if (qr) {  // the receipt's QR, drawn by the server, to scan as from a paper receipt
      const code = document.createElement("img");
      code.src = "/track/" + encodeURIComponent(token) + "/receipt-qr.svg"; code.alt = T.fiscalQr;
      code.id = "receipt-qr"; code.width = 132; code.height = 132; receipt.append(code);
    }
    if (qr && /^https:\/\//.test(qr)) {  // the receipt's QR text: the SRC's page of the receipt
      const p = document.createElement("p"); const a = document.createElement("a");
      a.href = qr; a.rel = "noopener noreferrer"; a.textContent = T.fiscalLink; p.append(a); receipt.append(p);
    }
    if (view.proof && view.proof.photoUrl) {
      const img = document.createElement("img"); img.src = view.proof.photoUrl; img.alt = T.proof;
      img.style.cssText = "max-width:100%;border-radius:10px"; receipt.append(img);
    }
    // The recipient's signature (issue 47): shown to whoever holds this link, the recipient's own.
    if (view.proof && view.proof.signatureUrl) {
      const sig = document.createElement("img"); sig.src = view.proof.signatureUrl; sig.alt = T.signature || "";
      sig.dataset.signature = "true";
      sig.style.cssText = "max-width:100%;background:#fff;border:1px solid #ddd;border-radius:10px"; receipt.append(sig);
    }
  }
  $("rating-card").hidden = !(view.state === "delivered");
  if (view.rating) { $("rating-status").textContent = T.thanks; }
  if (view.company.supportPhone) { $("support").hidden = false; $("support").textContent = T.questions + view.company.supportPhone; }
  const mapShown = view.state === "on_the_way" || view.state === "preparing";
  $("map").hidden = !mapShown;
  if (mapShown) { showMap(view); }
}

function refresh() {
  fetch("/track/" + encodeURIComponent(token), {cache: "no-store"}).then(async (response) => {
    if (!response.ok) { lastView = null; gone(); return; }
    render(await response.json());
  }).catch(() => { /* offline: try again on the next tick */ });
}

document.querySelectorAll("[data-ok]").forEach((button) => {
  button.addEventListener("click", async () => {
    const response = await fetch("/track/" + encodeURIComponent(token) + "/rating", {
      method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({ok: button.dataset.ok === "true", comment: $("comment").value || null}),
    });
    $("rating-status").textContent = response.ok ? T.thanks : T.rated;
  });
});

document.querySelectorAll("[data-lang]").forEach((button) => {
  button.addEventListener("click", () => {
    lang = button.dataset.lang;
    // The language (and whether the map was opened) is all this page keeps on the device; the
    // cookie makes the next first answer come in it.
    try { localStorage.setItem("track-lang", lang); } catch (e) { /* storage off */ }
    document.cookie = "track-lang=" + lang + "; path=/t/; max-age=31536000; samesite=lax";
    applyLanguage();
  });
});

// An earlier choice kept only in this device's storage (before the cookie): honoured at once.
let kept = null;
try { kept = localStorage.getItem("track-lang"); } catch (e) { /* storage off */ }
if (!new URLSearchParams(location.search).get("lang") && kept && TEXTS[kept] && kept !== lang) { lang = kept; }
applyLanguage();
setInterval(refresh, 15000);
