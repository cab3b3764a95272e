// The day board: one Yerevan working day of orders (GET /orders?date=), counted by state, searched
// and filtered in the page; create (with the pin picker), ready/draft/cancel/unassign/retry,
// assign and reassign, tracking link and the late notice. Orders whose courier's ETA falls after the
// delivery window are flagged "at risk" before they are late (GET /couriers/{id}/eta).
import {STATES} from "/console/texts.js";
import {amd, timeOf, toYerevanLocal, yerevanDate, fromYerevanLocal} from "/static/js/i18n.js";
import {PinPicker} from "/console/livemap.js";
import {loadMapLibre} from "/static/js/maplibre.js";
import {Importer} from "/console/importer.js";
import {AddressSearch} from "/console/addresssearch.js";

const $ = (id) => document.getElementById(id);
const OPEN = new Set(["draft", "ready", "assigned", "picked_up", "arrived"]);
// The dispatcher's buttons come from the order's own allowedMoves (the API's table, not a copy);
// only their labels are chosen here.
const LABELS = {draft: "toDraft", cancelled: "cancel", failed: "failOrder"};
function moves(order) {
  const allowed = order.allowedMoves || {status: [], deliverForCourier: false};
  const label = (to) => to === "ready" ? ({draft: "makeReady", assigned: "unassign", failed: "retry"}[order.status] || "makeReady") : LABELS[to];
  const list = allowed.status.filter((to) => label(to)).map((to) => [to, label(to)]);
  if (allowed.deliverForCourier) { list.push(["delivered", "deliverForCourier"]); }
  // The order the buttons always stood in: the forward move first, cancel or fail last.
  const rank = {ready: 0, draft: 1, failed: 2, delivered: 3, cancelled: 4};
  return list.sort((a, b) => rank[a[0]] - rank[b[0]]);
}

const DOOR = ["entrance", "floor", "apartment", "intercom"];

// "Entrance 2 · Floor 5 · …" of the parts an order has ("" for none).
function doorText(order, T) {
  const parts = order.addressDetails || {};
  return DOOR.filter((part) => parts[part]).map((part) => T[part] + " " + parts[part]).join(" · ");
}

function el(tag, attributes, ...children) {
  const element = document.createElement(tag);
  Object.entries(attributes || {}).forEach(([key, value]) => {
    if (value === undefined || value === null || value === false) { return; }
    if (key === "dataset") { Object.assign(element.dataset, value); } else if (key in element && key !== "list") { element[key] = value; } else { element.setAttribute(key, value); }
  });
  element.append(...children.filter((c) => c !== null && c !== undefined));
  return element;
}

export class Board {
  constructor(ctx) {
    this.ctx = ctx;
    this.reset();
    $("day-date").value = yerevanDate();
    $("day-date").addEventListener("change", () => { this.load().catch((e) => ctx.fail(e)); });
    $("search").addEventListener("input", () => this.render());
    $("filter-courier").addEventListener("change", () => this.render());
    $("new-order").addEventListener("click", () => this.openCreate());
    $("order-close").addEventListener("click", () => $("order-dialog").close());
    $("order-form").addEventListener("submit", (event) => { event.preventDefault(); this.create(); });
    $("o-cod").addEventListener("change", () => { if ($("o-cod").checked && !$("o-cod-amount").value) { $("o-cod-amount").value = $("o-amount").value; } });
    $("link-copy").addEventListener("click", () => this.copy("link-url"));
    $("late-make").addEventListener("click", () => this.lateText());
    $("late-send").addEventListener("click", () => this.sendLate());
    $("code-reset").addEventListener("click", () => this.resetCode());
    $("link-new").addEventListener("click", () => this.askNewLink());
    $("fail-close").addEventListener("click", () => $("fail-dialog").close());
    $("fail-form").addEventListener("submit", (event) => { event.preventDefault(); this.failOnTheWay(); });
    $("behalf-close").addEventListener("click", () => $("behalf-dialog").close());
    $("behalf-form").addEventListener("submit", (event) => { event.preventDefault(); this.deliverForCourier(); });
    $("link-new-yes").addEventListener("click", () => this.issueLink());
    $("link-new-no").addEventListener("click", () => { $("link-new-confirm").hidden = true; });
    this.picker = null;
    // The offline address search: near the pin map's centre (the default depot until it moves);
    // an answer fills the address and the pin, which the dispatcher can still move by hand.
    this.finder = new AddressSearch(ctx, {
      input: $("o-find"), list: $("o-find-list"), status: $("o-find-status"),
      near: () => (this.picker ? {lat: this.picker.map.getCenter().lat, lon: this.picker.map.getCenter().lng} : this.depot || null),
      onPick: (found) => this.placeFound(found),
    });
    this.importer = new Importer(ctx, () => this.load());
    // Where the dispatcher was on the board, by order id: a dialog that closes returns there even
    // when the row it was opened from has been redrawn meanwhile.
    document.querySelector("#orders tbody").addEventListener("focusin", (event) => {
      const key = this.focusKey(event.target);
      if (key) { this.lastFocus = key; }
    });
    document.querySelectorAll("dialog").forEach((dialog) => dialog.addEventListener("close", () => {
      setTimeout(() => {
        const active = document.activeElement;
        if (!active || active === document.body || !active.isConnected) { this.restoreFocus(this.lastFocus); }
      }, 0);
    }));
    setInterval(() => { if (this.ctx.session) { this.checkRisk(); } }, 60000);
  }

  reset() {
    this.orders = new Map();
    this.selected = new Set();
    this.state = "all";
    this.risk = new Map();  // orderId -> eta ISO when the ETA is past the window's end
    this.loaded = false;
    if (document.querySelector("#orders tbody")) { this.render(); }
  }

  async load() {
    const day = $("day-date").value || yerevanDate();
    const {orders, hasMore} = await this.ctx.api.get("/orders?date=" + encodeURIComponent(day) + "&limit=2000");
    this.orders = new Map(orders.map((o) => [o.id, o]));
    $("has-more").hidden = !hasMore;  // the API's largest page; search narrows what is shown, not what is loaded
    this.loaded = true;
    this.render();
    this.checkRisk();
  }

  upsert(order) { this.orders.set(order.id, order); this.render(); }

  // Realtime: refetch the order an event names (the event carries ids only), so the row is exact.
  onEvent(event) {
    const orderId = event.payload && event.payload.orderId;
    if (!orderId || !event.kind.match(/^(order|assignment)\./)) { return; }
    this.queueChanged(orderId, event.kind === "order.created");
  }

  // Changed orders are gathered for half a second: a few are fetched one by one, many (an import of
  // a day's orders announces thousands, each created and made ready; a bulk action hundreds) reload
  // the day once instead of a request per order.
  queueChanged(orderId, created) {
    this.changed = this.changed || new Map();
    this.changed.set(orderId, (this.changed.get(orderId) || false) || created);
    if (this.changedTimer) { return; }
    this.changedTimer = setTimeout(() => {
      const changes = [...this.changed];
      this.changed.clear(); this.changedTimer = null;
      const today = $("day-date").value === yerevanDate();
      if (changes.length > 20) { if (today || changes.some(([id]) => this.orders.has(id))) { this.load().catch((error) => this.ctx.fail(error)); } return; }
      changes.forEach(([id, isNew]) => {
        if (isNew && !today && !this.orders.has(id)) { return; }  // a new order belongs to today's board
        this.ctx.api.get("/orders/" + id).then(({order}) => {
          this.upsert(order);
          if (order.courierId) { this.checkRisk(order.courierId); }
        }).catch(() => {});
      });
    }, 500);
  }

  visible() {
    const query = $("search").value.trim().toLowerCase();
    const courier = $("filter-courier").value;
    return [...this.orders.values()].filter((o) => {
      if (this.state !== "all" && o.status !== this.state) { return false; }
      if (this.needsPinOnly && !o.needsPin) { return false; }  // the "Needs a pin" chip (pins.js)
      if (courier === "none" && o.courierId) { return false; }
      if (courier && courier !== "none" && o.courierId !== courier) { return false; }
      if (!query) { return true; }
      return [o.publicId, o.recipientName, o.recipientPhone, o.addressLabelHy, o.addressLabelRu, o.addressLabelEn]
        .some((v) => v && v.toLowerCase().includes(query));
    });
  }

  address(order) {
    const lang = this.ctx.lang;
    return (lang === "ru" && order.addressLabelRu) || (lang === "en" && order.addressLabelEn) || order.addressLabelHy;
  }

  stateLabel(status) { const T = this.ctx.T; return status === "failed" ? T.failed_state : T[status]; }

  render() {
    const T = this.ctx.T;
    const tbody = document.querySelector("#orders tbody");
    if (!tbody) { return; }
    // Counts per state and the state chips.
    const counts = {all: this.orders.size};
    STATES.forEach((s) => { counts[s] = 0; });
    this.orders.forEach((o) => { counts[o.status] = (counts[o.status] || 0) + 1; });
    const chips = $("state-counts");
    chips.setAttribute("aria-label", T.status);
    chips.replaceChildren(...["all", ...STATES].map((state) => {
      const button = el("button", {type: "button", dataset: {state: state}, "aria-pressed": String(this.state === state)},
        state === "all" ? T.all : this.stateLabel(state), el("span", {className: "count", dataset: {count: state}}, String(counts[state] || 0)));
      button.addEventListener("click", () => { this.state = state; this.render(); });
      return button;
    }));
    // The courier filter keeps its choice across renders.
    const filter = $("filter-courier");
    const chosen = filter.value;
    const couriers = this.ctx.fleet ? this.ctx.fleet.list() : [];
    filter.replaceChildren(el("option", {value: ""}, T.anyCourier), el("option", {value: "none"}, T.noCourier),
      ...couriers.map((c) => el("option", {value: c.id}, c.displayName)));
    filter.value = chosen;
    const rows = this.visible().sort((a, b) => (a.status === b.status ? (b.createdAt > a.createdAt ? 1 : -1) : STATES.indexOf(a.status) - STATES.indexOf(b.status)));
    this.shown = rows;
    this.drawRows(tbody, rows, couriers);
    this.ctx.bulk && this.ctx.bulk.render();
    $("no-orders").hidden = !this.loaded || rows.length > 0;
    if (this.ctx.fleet) { this.ctx.fleet.showOrders([...this.orders.values()].filter((o) => OPEN.has(o.status))); }
  }

  // Rows are kept by order id and rebuilt only when what they show changed, then put in order
  // without touching the rows already in place: a redraw (a live update, an assignment, a closed
  // dialog) leaves the row the dispatcher is on, and focus is put back by order id and control
  // (data-focus) when its row had to be rebuilt or moved (WCAG 2.4.3).
  drawRows(tbody, rows, couriers) {
    const focus = this.focusKey(document.activeElement) || null;
    const couriersKey = couriers.map((c) => [c.id, c.displayName, c.active, c.shift ? c.shift.status : ""].join(":")).join("|");
    const kept = new Map([...tbody.children].map((tr) => [tr.dataset.orderId, tr]));
    const wanted = rows.map((order) => {
      const signature = JSON.stringify([order, this.risk.get(order.id) || null, this.selected.has(order.id), couriersKey, this.ctx.lang]);
      const old = kept.get(order.id);
      kept.delete(order.id);
      if (old && old.dataset.signature === signature) { return old; }
      const fresh = this.row(order, couriers);
      fresh.dataset.signature = signature;
      if (old) { old.replaceWith(fresh); }
      return fresh;
    });
    kept.forEach((tr) => tr.remove());
    wanted.forEach((tr, index) => { if (tbody.children[index] !== tr) { tbody.insertBefore(tr, tbody.children[index] || null); } });
    if (focus && !tbody.contains(document.activeElement)) { this.restoreFocus(focus); }
  }

  // {orderId, control} of a board control, or undefined outside the board's rows.
  focusKey(element) {
    const row = element && element.closest && element.closest("#orders tbody tr[data-order-id]");
    if (!row || !element.dataset.focus) { return undefined; }
    return {orderId: row.dataset.orderId, control: element.dataset.focus};
  }

  restoreFocus(key) {
    if (!key) { return; }
    const row = document.querySelector("#orders tbody tr[data-order-id='" + key.orderId + "']");
    if (!row) { return; }
    // The same control, else (an Assign button greyed once the order is assigned) the courier list,
    // else the order's number, which every row has.
    const target = [key.control, "courier", "detail"].map((c) => row.querySelector("[data-focus='" + c + "']"))
      .find((candidate) => candidate && !candidate.disabled);
    if (target) { target.focus(); }
  }

  row(order, couriers) {
    const T = this.ctx.T;
    const lang = this.ctx.lang;
    const risk = this.risk.get(order.id);
    const pick = el("input", {type: "checkbox", checked: this.selected.has(order.id), dataset: {select: order.id, focus: "select"},
                              "aria-label": T.choose + " " + order.publicId});
    pick.addEventListener("change", () => { if (pick.checked) { this.selected.add(order.id); } else { this.selected.delete(order.id); } this.render(); });
    const window = order.deliveryWindowStart || order.deliveryWindowEnd
      ? timeOf(order.deliveryWindowStart, lang) + "–" + timeOf(order.deliveryWindowEnd, lang) : "";
    const status = el("td", {}, el("span", {className: "badge", dataset: {status: order.status}}, this.stateLabel(order.status)));
    if (risk) { status.append(" ", el("span", {className: "badge risk", title: T.atRisk}, T.atRisk + " " + timeOf(risk, lang))); }
    if (order.deliveryCodeLocked && OPEN.has(order.status)) {  // the courier is stuck: a new code is one click away
      const locked = el("button", {type: "button", className: "badge risk", dataset: {codeLocked: order.id}, title: T.codeLocked}, T.codeLockedBadge);
      locked.addEventListener("click", () => this.openLink(order));
      status.append(" ", locked);
    }
    if (order.needsPin) {  // an imported address the index could not place (pins.js lists and filters them)
      status.append(" ", el("span", {className: "badge risk", dataset: {needsPin: order.id}, title: order.needsPin}, T.needsPinBadge));
    }
    if (order.needsAttention) {  // the courier's app could not record a move (docs/courier-app.md)
      const flag = order.needsAttention;
      const text = T.needsAttention + (flag.heldAmountAmd ? " · " + T.attentionHeld + amd(flag.heldAmountAmd, lang) : "");
      const badge = el("button", {type: "button", className: "badge risk", dataset: {attention: order.id}, title: flag.reason}, text);
      badge.addEventListener("click", () => this.openDetail(order.id));
      status.append(" ", badge, el("span", {className: "small muted", dataset: {attentionReason: order.id}}, " " + flag.reason));
    }
    let courierCell;
    const stop = this.stopNumber(order);
    if (order.status === "ready" || order.status === "assigned") {
      // Choosing in the list assigns nothing: the Assign button (or Enter in the list) does, so an
      // arrow key never notifies a courier (WCAG 3.2.2).
      const select = el("select", {dataset: {assign: order.id, focus: "courier"}, "aria-label": T.assignTo + " " + order.publicId},
        el("option", {value: ""}, order.courierId ? "" : T.noCourier),
        ...this.byShift(couriers.filter((c) => c.active)).map((c) => el("option", {value: c.id, selected: c.id === order.courierId,
          dataset: {shift: c.shift ? c.shift.status : "off"}}, c.displayName + " · " + this.ctx.fleet.shiftLabel(c))));
      if (order.courierId) { select.firstChild.remove(); }
      const go = el("button", {type: "button", className: "small", dataset: {assignGo: order.id, focus: "assign"}, disabled: true,
                               "aria-label": T.assignTo + " " + order.publicId}, T.assignTo);
      const chosen = () => select.value && select.value !== (order.courierId || "");
      select.addEventListener("change", () => { go.disabled = !chosen(); });
      select.addEventListener("keydown", (event) => {
        if (event.key === "Enter" && chosen()) { event.preventDefault(); this.assign(order, select.value); }
      });
      go.addEventListener("click", () => { if (chosen()) { this.assign(order, select.value); } });
      courierCell = el("td", {}, el("div", {className: "assign"}, stop, select, go));
    } else {
      const courier = couriers.find((c) => c.id === order.courierId) || null;
      courierCell = el("td", {}, stop, courier ? courier.displayName : (order.lastAttempt && order.lastAttempt.courierName) || "");
    }
    const actions = el("div", {className: "actions"});
    moves(order).forEach(([to, label]) => {
      const button = el("button", {type: "button", className: "small ghost", dataset: {move: to, focus: "move-" + to}}, T[label]);
      const onTheWay = ["picked_up", "arrived"].includes(order.status);
      button.addEventListener("click", () => (onTheWay && to === "failed" ? this.openFail(order) : onTheWay && to === "delivered" ? this.openBehalf(order) : this.move(order, to)));
      actions.append(button);
    });
    if (OPEN.has(order.status) && order.status !== "draft" || order.status === "delivered") {
      const link = el("button", {type: "button", className: "small", dataset: {link: order.id, focus: "link"}}, T.trackingLink);
      link.addEventListener("click", () => this.openLink(order));
      actions.append(link);
    }
    if (order.allowedMoves && order.allowedMoves.reassign) {  // a phone died, a scooter broke
      const hand = el("button", {type: "button", className: "small ghost", dataset: {handover: order.id, focus: "handover"}}, T.handOver);
      hand.addEventListener("click", () => this.ctx.handover.open(order));
      actions.append(hand);
    }
    if (risk && ["picked_up", "arrived"].includes(order.status)) {  // the late notice, one click away
      const late = el("button", {type: "button", className: "small", dataset: {late: order.id, focus: "late"}}, T.lateText);
      late.addEventListener("click", async () => { await this.openLink(order); await this.lateText(); });
      actions.append(late);
    }
    return el("tr", {dataset: {orderId: order.id, status: order.status, risk: risk ? "true" : "false"}},
      el("td", {}, pick),
      el("td", {}, this.detailButton(order)),
      el("td", {}, order.recipientName, el("br"), el("span", {className: "muted small"}, order.recipientPhone)),
      el("td", {lang: lang === "ru" && order.addressLabelRu ? "ru" : lang === "en" && order.addressLabelEn ? "en" : "hy"}, this.address(order)),
      el("td", {}, window),
      status, courierCell, el("td", {}, actions));
  }

  // Who can take an order now comes first: on shift, then on a break, then off shift.
  byShift(couriers) {
    const rank = (c) => (!c.shift ? 2 : c.shift.status === "on_break" ? 1 : 0);
    return [...couriers].sort((a, b) => rank(a) - rank(b) || a.displayName.localeCompare(b.displayName));
  }

  // The order's place in its courier's run (a plan applied, or a hand-assignment at the end).
  stopNumber(order) {
    if (!order.courierId || !order.sequence || !OPEN.has(order.status)) { return null; }
    return el("span", {className: "stop-no", dataset: {stopNumber: order.id}, title: this.ctx.T.stopNumber + " " + order.sequence,
                       "aria-label": this.ctx.T.stopNumber + " " + order.sequence}, String(order.sequence));
  }

  detailButton(order) {
    const b = el("button", {type: "button", className: "link", dataset: {detail: order.id, focus: "detail"}}, order.publicId);
    b.addEventListener("click", () => this.openDetail(order.id));
    return b;
  }

  // The order in full: its fields, the proof (photo through a short-lived signed link), and the
  // audit trail (GET /orders/{id}/events), with Edit for a draft or ready order.
  async openDetail(orderId) {
    const T = this.ctx.T, lang = this.ctx.lang, api = this.ctx.api;
    try {
      const [{order}, {events}] = await Promise.all([api.get("/orders/" + orderId), api.get("/orders/" + orderId + "/events")]);
      this.upsert(order);
      const courier = this.ctx.fleet.couriers.get(order.courierId);
      const rows = [[T.status, this.stateLabel(order.status)], [T.recipient, order.recipientName + " · " + order.recipientPhone],
        [T.address, [order.addressLabelHy, order.addressLabelRu, order.addressLabelEn].filter(Boolean).join(" / ")],
        [T.pin, order.pin.lat.toFixed(6) + ", " + order.pin.lon.toFixed(6)],
        [T.door, doorText(order, T) || "—"], [T.noteToCourier, order.noteToCourier || "—"], [T.externalRef, order.externalRef || "—"],
        [T.window, order.deliveryWindowStart || order.deliveryWindowEnd ? timeOf(order.deliveryWindowStart, lang) + "–" + timeOf(order.deliveryWindowEnd, lang) : "—"],
        [T.amount, amd(order.amountAmd, lang) + (order.isCod ? " · " + T.cod + " " + amd(order.codAmountAmd, lang) : "")],
        [T.code, order.otpRequired ? "✓" : "—"], [T.courier, courier ? courier.displayName : (order.lastAttempt && order.lastAttempt.courierName) || "—"]];
      if (order.needsAttention) { rows.push([T.needsAttention, order.needsAttention.reason + (order.needsAttention.heldAmountAmd ? " · " + T.attentionHeld + amd(order.needsAttention.heldAmountAmd, lang) : "")]); }
      if (order.proof) { rows.push([T.proofBy, (order.proof.recipientName || "—") + (order.proof.notes ? " · " + order.proof.notes : "")]); }
      // Issue 47: what the delivery needed, and the scan and age check it recorded.
      if (order.proofRequired) { rows.push([T.proofNeeded, order.proofRequired.map((k) => T["proofKind_" + k] || k).join(", ") || "—"]); }
      if (order.proof && order.proof.scannedCode) { rows.push([T.proofScanned, order.proof.scannedCode]); }
      if (order.proof && order.proof.ageChecked) { rows.push([T.proofKind_age, "✓"]); }
      if (order.collectedAmountAmd !== null && order.collectedAmountAmd !== undefined) { rows.push([T.collectedLabel, amd(order.collectedAmountAmd, lang)]); }
      // The fee charged to the shop (issue 47, docs/fees.md), changed here by a dispatcher (audited).
      rows.push([T.deliveryFee, order.deliveryFeeAmd === null || order.deliveryFeeAmd === undefined ? "—" : amd(order.deliveryFeeAmd, lang)]);
      $("detail-fee-row").hidden = order.status === "cancelled";
      $("detail-fee").value = order.deliveryFeeAmd === null || order.deliveryFeeAmd === undefined ? "" : String(order.deliveryFeeAmd);
      $("detail-fee-save").onclick = async () => {
        const text = $("detail-fee").value.trim();
        try {
          const {order: changed} = await api.patch("/orders/" + order.id, {deliveryFeeAmd: text === "" ? null : parseInt(text, 10)});
          this.upsert(changed);
          this.ctx.toast(T.feeChanged);
          $("detail-dialog").close();
          await this.openDetail(order.id);
        } catch (error) { this.ctx.fail(error); }
      };
      if (order.fiscalReceipt) { rows.push([T.fiscalReceipt, this.fiscalCell(order)]); }
      $("detail-title").textContent = order.publicId;
      $("detail-fields").replaceChildren(...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
      // Every step names who made it and in which role (a dispatcher's act for a courier says so).
      const who = (e) => (e.actorName ? e.actorName + " (" + (T["role_" + e.actorRole] || e.actorRole || "—") + ")" : T.system) +
        (e.onBehalfOf ? " " + T.forCourier + " " + e.onBehalfOf.name : "");
      $("detail-audit").replaceChildren(...events.map((e) => el("li", {dataset: {kind: e.kind, actor: e.actorName || "", role: e.actorRole || "system"}},
        timeOf(e.createdAt, lang) + " · " + (T["audit_" + e.kind] || e.kind.replace(/_/g, " ")) + (e.toStatus ? " → " + this.stateLabel(e.toStatus) : "") +
        (e.data && e.data.reason ? " (" + e.data.reason + ")" : "") +
        // The proof the courier's attempt carried (issue 47): photo, signature, code, scan…
        (e.data && e.data.proofKinds && e.data.proofKinds.length ? " · " + T.proofGiven + " " + e.data.proofKinds.map((k) => T["proofKind_" + k] || k).join(", ") : "") +
        // A message to the recipient: which one, on which channel (SMS, e-mail).
        (e.data && e.data.messageId ? " (" + (T["msgEvent_" + e.data.event] || e.data.event) + " · " + e.data.channel + ")" : "") +
        (e.data && e.data.error ? ": " + e.data.error : "") +  // the provider's own error
        " · " + who(e))));
      const edit = $("detail-edit");
      edit.hidden = !["draft", "ready"].includes(order.status);
      edit.onclick = () => { $("detail-dialog").close(); this.openCreate(order); };
      const photo = $("detail-photo");
      photo.hidden = true;
      $("detail-dialog").showModal();
      const signature = $("detail-signature");
      signature.hidden = true;
      if (order.proof && order.proof.hasPhoto) {
        const {url} = await api.get("/orders/" + order.id + "/proof/photo-url");
        photo.src = url; photo.alt = T.photo + " " + order.publicId; photo.hidden = false;
      }
      if (order.proof && order.proof.hasSignature) {  // the same signed link the shop reads
        const proof = await api.get("/orders/" + order.id + "/proof");
        if (proof.signature) { signature.src = proof.signature.url; signature.alt = T.proofKind_signature + " " + order.publicId; signature.hidden = false; }
      }
    } catch (error) { this.ctx.fail(error); }
  }

  // The order's fiscal receipt on e-HDM (docs/fiscal-receipts.md): its number and QR link; when its
  // printing is unknown or refused, the person's decision (the receipt found, or print it again);
  // once printed, the return receipt of an order that came back.
  fiscalCell(order) {
    const T = this.ctx.T, api = this.ctx.api, receipt = order.fiscalReceipt;
    const cell = el("span", {dataset: {fiscal: receipt.state}}, T["fiscal_" + receipt.state] || receipt.state,
      receipt.fiscalNumber ? " · № " + receipt.fiscalNumber : "");
    if (receipt.qr && /^https:\/\//.test(receipt.qr)) {
      cell.append(" · ", el("a", {href: receipt.qr, rel: "noopener noreferrer", target: "_blank"}, T.fiscalQr));
    }
    const act = async (path, body) => {
      try { await api.post("/orders/" + order.id + path, body); await this.openDetail(order.id); } catch (error) { this.ctx.fail(error); }
    };
    if (order.needsAttention && order.needsAttention.move === "fiscal_receipt") {
      const kind = receipt.state === "returning" ? "return" : "sale";
      const input = el("input", {type: "text", maxLength: 64, placeholder: T.fiscalReceiptId, "aria-label": T.fiscalReceiptId, dataset: {fiscalReceiptId: order.id}});
      const found = el("button", {type: "button", dataset: {fiscalFound: order.id}}, T.fiscalFound);
      found.addEventListener("click", () => act("/fiscal-receipts/decision", {kind: kind, outcome: "printed", receiptId: input.value.trim()}));
      const again = el("button", {type: "button", dataset: {fiscalAgain: order.id}}, T.fiscalNotPrinted);
      again.addEventListener("click", () => act("/fiscal-receipts/decision", {kind: kind, outcome: "not_printed"}));
      cell.append(el("br"), input, " ", found, " ", again);
    } else if (receipt.state === "printed" && order.status === "delivered") {
      const back = el("button", {type: "button", dataset: {fiscalReturn: order.id}}, T.fiscalReturn);
      back.addEventListener("click", () => act("/fiscal-receipts/return"));
      cell.append(" ", back);
    }
    return cell;
  }

  // A courier whose phone died: the dispatcher fails a picked-up or arrived order with a reason
  // (POST /orders/{id}/status), or records it delivered for the courier with the recipient's code
  // or name (POST /orders/{id}/deliver-for-courier), audited as the dispatcher's act.
  openFail(order) {
    this.fieldOrder = order;
    $("fail-form").reset();
    $("fail-error").textContent = "";
    $("fail-order").textContent = order.publicId + " · " + this.address(order);
    $("fail-dialog").showModal();
  }

  async failOnTheWay() {
    const code = $("fd-reason").value, note = $("fd-note").value.trim();
    // The API keeps a failure code as the order's failureReason and any other text as given
    // (failureReason other) in the audit trail.
    const reason = code === "other" && note ? note : code;
    try {
      const {order} = await this.ctx.api.post("/orders/" + this.fieldOrder.id + "/status", {status: "failed", reason: reason});
      this.upsert(order);
      $("fail-dialog").close();
    } catch (error) { $("fail-error").textContent = this.ctx.explain(error); }
  }

  openBehalf(order) {
    this.fieldOrder = order;
    $("behalf-form").reset();
    $("behalf-error").textContent = "";
    $("behalf-order").textContent = order.publicId + " · " + this.address(order);
    $("bd-code-box").hidden = !order.otpRequired;
    $("bd-cash-box").hidden = !order.isCod;
    $("bd-collected").value = order.isCod ? String(order.codAmountAmd) : "";
    $("behalf-dialog").showModal();
  }

  async deliverForCourier() {
    const order = this.fieldOrder;
    const body = {};
    if (order.otpRequired && $("bd-code").value.trim()) { body.otpCode = $("bd-code").value.trim(); }
    if ($("bd-name").value.trim()) { body.recipientName = $("bd-name").value.trim(); }
    if (order.isCod && $("bd-collected").value !== "") { body.collectedAmountAmd = parseInt($("bd-collected").value, 10); }
    if ($("bd-notes").value.trim()) { body.notes = $("bd-notes").value.trim(); }
    try {
      const {order: done} = await this.ctx.api.post("/orders/" + order.id + "/deliver-for-courier", body);
      this.upsert(done);
      $("behalf-dialog").close();
    } catch (error) { $("behalf-error").textContent = this.ctx.explain(error); }
  }

  async move(order, status) {
    try {
      const {order: moved} = await this.ctx.api.post("/orders/" + order.id + "/status", {status: status});
      this.upsert(moved);
    } catch (error) { this.ctx.fail(error); }
  }

  async assign(order, courierId) {
    try {
      const {order: assigned} = await this.ctx.api.post("/orders/" + order.id + "/assign", {courierId: Number(courierId)});
      this.upsert(assigned);
    } catch (error) { this.ctx.fail(error); this.render(); }
  }

  // At risk: an open, assigned order whose courier's ETA (GET /couriers/{id}/eta) is after its
  // delivery window ends. Checked on load, every minute and when a courier's order moves.
  async checkRisk(onlyCourier) {
    const couriers = new Set();
    this.orders.forEach((o) => {
      if (o.courierId && o.deliveryWindowEnd && ["assigned", "picked_up", "arrived"].includes(o.status)) { couriers.add(o.courierId); }
    });
    for (const courierId of couriers) {
      if (onlyCourier && courierId !== onlyCourier) { continue; }
      try {
        const eta = await this.ctx.api.get("/couriers/" + courierId + "/eta");
        eta.stops.forEach((stop) => {
          const order = this.orders.get(stop.orderId);
          if (!order) { return; }
          const due = stop.expectedAt || stop.eta;  // the expected hand-over counts the waits at earlier stops
          if (due && order.deliveryWindowEnd && new Date(due) > new Date(order.deliveryWindowEnd)) { this.risk.set(order.id, due); } else { this.risk.delete(order.id); }
        });
      } catch (error) { /* the next pass tries again */ }
    }
    this.render();
  }

  // The order form: a new order, or (given one) an edit of a draft or ready order (PATCH).
  async openCreate(editing) {
    const T = this.ctx.T;
    const dialog = $("order-dialog");
    this.editing = editing || null;
    $("order-form").reset();
    this.finder.reset();
    $("o-ready").checked = true;
    $("o-ready").closest("label").hidden = Boolean(editing);
    $("order-dialog-title").textContent = editing ? T.editTitle + " " + editing.publicId : T.orderTitle;
    $("order-error").textContent = "";
    if (editing) {
      $("o-name").value = editing.recipientName; $("o-phone").value = editing.recipientPhone;
      $("o-addr-hy").value = editing.addressLabelHy; $("o-addr-ru").value = editing.addressLabelRu || ""; $("o-addr-en").value = editing.addressLabelEn || "";
      $("o-amount").value = String(editing.amountAmd); $("o-cod").checked = editing.isCod;
      $("o-cod-amount").value = editing.isCod ? String(editing.codAmountAmd) : ""; $("o-code").checked = editing.otpRequired;
      $("o-from").value = toYerevanLocal(editing.deliveryWindowStart); $("o-until").value = toYerevanLocal(editing.deliveryWindowEnd);
      $("o-lat").value = editing.pin.lat.toFixed(6); $("o-lon").value = editing.pin.lon.toFixed(6);
      const parts = editing.addressDetails || {};
      DOOR.forEach((part) => { $("o-" + part).value = parts[part] || ""; });
      $("o-note").value = editing.noteToCourier || ""; $("o-ref").value = editing.externalRef || "";
      $("o-lang").value = editing.recipientLanguage || ""; $("o-email").value = editing.recipientEmail || "";
    }
    dialog.showModal();
    if (!this.picker) {
      let centre = {lat: 40.1792, lon: 44.4991};  // Republic Square until the default depot is known
      try {
        const {depots} = await this.ctx.api.get("/company/depots");
        const depot = depots.find((d) => d.isDefault) || depots[0];
        if (depot) { centre = depot.point; this.depot = depot.point; }
      } catch (error) { /* the centre of Yerevan will do */ }
      // MapLibre may not be here yet (the live map is made later, or not at all on a phone): the
      // form's pin map fetches it. Without it the form still takes typed coordinates.
      try { await loadMapLibre(); } catch (error) { this.ctx.fail(error); }
      if (typeof maplibregl !== "undefined" && !this.picker) {
        this.picker = new PinPicker("pin-map", centre, (point) => {
          $("o-lat").value = point.lat.toFixed(6); $("o-lon").value = point.lon.toFixed(6);
        }, this.ctx.T);
        const typed = () => {
          const lat = parseFloat($("o-lat").value), lon = parseFloat($("o-lon").value);
          if (!isNaN(lat) && !isNaN(lon)) { this.picker.set({lat: lat, lon: lon}); }
        };
        $("o-lat").addEventListener("change", typed); $("o-lon").addEventListener("change", typed);
      }
    } else { this.picker.clear(); this.picker.relabel(this.ctx.T); this.picker.resize(); }
    if (editing && this.picker) { this.picker.set(editing.pin); }
    $("o-name").focus();
  }

  // An address search answer: its label becomes the address and its point the pin, exactly (the
  // fields hold every digit the index has, so the order is saved at the answer's point).
  placeFound(found) {
    $("o-addr-hy").value = found.label;
    $("o-lat").value = String(found.lat); $("o-lon").value = String(found.lon);
    if (this.picker) { this.picker.set({lat: found.lat, lon: found.lon}); }
  }

  async create() {
    const T = this.ctx.T;
    const lat = parseFloat($("o-lat").value), lon = parseFloat($("o-lon").value);
    if (isNaN(lat) || isNaN(lon)) { $("order-error").textContent = T.pinMissing; return; }
    const optional = (id) => $(id).value.trim() || null;
    const body = {
      recipientName: $("o-name").value.trim(), recipientPhone: $("o-phone").value.trim(),
      addressLabelHy: $("o-addr-hy").value.trim(), addressLabelRu: optional("o-addr-ru"), addressLabelEn: optional("o-addr-en"),
      amountAmd: parseInt($("o-amount").value || "0", 10), isCod: $("o-cod").checked, otpRequired: $("o-code").checked,
      deliveryWindowStart: fromYerevanLocal($("o-from").value), deliveryWindowEnd: fromYerevanLocal($("o-until").value),
      pin: {lat: lat, lon: lon},
      externalRef: optional("o-ref"), noteToCourier: optional("o-note"), addressDetails: null,
      // Messages to the recipient (docs/recipient-messages.md): their language, an e-mail address.
      recipientLanguage: $("o-lang").value || null, recipientEmail: optional("o-email"),
    };
    DOOR.forEach((part) => { if (optional("o-" + part)) { body.addressDetails = Object.assign(body.addressDetails || {}, {[part]: optional("o-" + part)}); } });
    if (body.isCod && $("o-cod-amount").value) { body.codAmountAmd = parseInt($("o-cod-amount").value, 10); }
    $("order-save").disabled = true;
    try {
      if (this.editing) {
        const {order} = await this.ctx.api.patch("/orders/" + this.editing.id, body);
        this.upsert(order);
        $("order-dialog").close();
        this.ctx.toast(T.saved);
        return;
      }
      let {order} = await this.ctx.api.post("/orders", body);
      if ($("o-ready").checked) { order = (await this.ctx.api.post("/orders/" + order.id + "/status", {status: "ready"})).order; }
      this.upsert(order);
      $("order-dialog").close();
      this.ctx.toast(T.created + order.publicId);
    } catch (error) {
      $("order-error").textContent = this.ctx.explain(error);
    } finally { $("order-save").disabled = false; }
  }

  async openLink(order) {
    const T = this.ctx.T;
    $("late-text").value = ""; $("late-to").textContent = ""; $("late-send").hidden = true;
    try {
      // Fresh: wrong codes the courier typed since the board loaded may have locked the code.
      order = (await this.ctx.api.get("/orders/" + order.id)).order;
      this.upsert(order);
      this.linkOrder = order;
      this.showCode(order);
      // A late notice goes only to a recipient whose order is out (assigned, picked up or arrived).
      $("late-section").hidden = !["assigned", "picked_up", "arrived"].includes(order.status);
      // The link the recipient holds now: opening the dialog issues nothing and ends nothing.
      // With none in force (never issued, expired), one is issued: that ends nothing.
      const {link} = await this.ctx.api.get("/orders/" + order.id + "/tracking");
      this.showLink(link);
      // Issued before the dialog opens, so it never shows an empty link that fills in later.
      if (!link) { await this.issueLink(true); }
      $("link-dialog").showModal();
      if (this.linkInForce && this.linkInForce.path) { $("link-url").select(); }
    } catch (error) { this.ctx.fail(error); }
  }

  showLink(link) {
    const T = this.ctx.T;
    this.linkInForce = link;
    $("link-new-confirm").hidden = true;
    $("link-url").value = link && link.path ? new URL(link.path, location.origin).href : "";
    $("link-url").closest(".row").hidden = !(link && link.path);
    $("link-expires").textContent = link ? T.expires + new Date(link.expiresAt).toLocaleString(this.ctx.lang, {timeZone: "Asia/Yerevan"}) : "";
    $("link-none").hidden = Boolean(link && link.path);
    $("link-none").textContent = link ? T.linkNotShown : T.noLink;
    $("link-dialog").dataset.link = link ? (link.path ? "shown" : "hidden") : "none";
  }

  // A new link ends the recipient's: a separate action, confirmed when a link is in force.
  askNewLink() {
    if (this.linkInForce) { $("link-new-confirm").hidden = false; $("link-new-yes").focus(); return; }
    this.issueLink();
  }

  async issueLink(first) {
    try {
      const link = await this.ctx.api.post("/orders/" + this.linkOrder.id + "/tracking", {});
      this.showLink({path: link.path, expiresAt: link.expiresAt});
      $("link-url").select();
      if (!first) { this.ctx.toast(this.ctx.T.newLinkIssued); }
    } catch (error) { this.ctx.fail(error); }
  }

  // The late notice, as the recipient will get it (their language, the link their messages
  // carry): first previewed with what it costs (SMS segments, UCS-2 for Armenian), then sent
  // through the company's SMS provider and e-mail (docs/recipient-messages.md).
  lateBody() {
    return {delayMinutes: parseInt($("late-delay").value || "15", 10)};
  }

  async lateText() {
    const T = this.ctx.T;
    const order = this.linkOrder;
    try {
      const preview = await this.ctx.api.post("/orders/" + order.id + "/messages/late/preview", this.lateBody());
      $("late-text").value = preview.text;
      const cost = preview.segments + " " + (preview.segments === 1 ? T.segment : T.segments) + " · " + preview.encoding.toUpperCase();
      $("late-to").textContent = preview.channels.length
        ? T.smsTo + order.recipientPhone + " · " + cost + " · " + preview.channels.join(", ")
        : cost + " · " + T.noChannel;
      $("late-to").dataset.segments = String(preview.segments);
      $("late-send").hidden = !preview.channels.length;
    } catch (error) { this.ctx.fail(error); }
  }

  async sendLate() {
    const order = this.linkOrder;
    $("late-send").disabled = true;
    try {
      const sent = await this.ctx.api.post("/orders/" + order.id + "/messages/late", this.lateBody());
      $("late-send").hidden = true;
      this.ctx.toast(this.ctx.T.lateQueued + " (" + sent.messages.length + ")");
    } catch (error) { this.ctx.fail(error); } finally { $("late-send").disabled = false; }
  }

  // An open order with a code: what to do when it is locked (it is, after five wrong tries: the
  // courier's app gets 423), one click from a new code.
  showCode(order) {
    const T = this.ctx.T;
    const box = $("link-code");
    box.hidden = !(order.otpRequired && OPEN.has(order.status));
    box.dataset.locked = String(Boolean(order.deliveryCodeLocked));
    $("code-advice").className = order.deliveryCodeLocked ? "warning" : "muted small";
    $("code-advice").textContent = order.deliveryCodeLocked ? T.codeLocked : T.codeHelp;
  }

  // A fresh code and attempt budget; the recipient's tracking page shows the new code.
  async resetCode() {
    try {
      const {order} = await this.ctx.api.post("/orders/" + this.linkOrder.id + "/delivery-code/reset", {});
      this.upsert(order);
      this.linkOrder = order;
      this.showCode(order);
      $("code-advice").textContent = this.ctx.T.codeReset;
      this.ctx.toast(this.ctx.T.codeReset);
    } catch (error) { this.ctx.fail(error); }
  }

  async copy(id) {
    const field = $(id);
    field.select();
    try { await navigator.clipboard.writeText(field.value); } catch (error) { document.execCommand("copy"); }
    this.ctx.toast(this.ctx.T.copied);
  }

  selectedIds() { return [...this.selected].filter((id) => this.orders.has(id)); }
}
