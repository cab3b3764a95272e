// Couriers: the list (shift, last fix and its age, cash outstanding, open orders; end a shift) and
// their markers on the live map, kept current by the realtime stream (courier.location moves a
// marker at once; shift and profile events refetch the courier).
import {amd, timeOf} from "/static/js/i18n.js";
import {LiveMap} from "/console/livemap.js";
import {loadMapLibre} from "/static/js/maplibre.js";

const $ = (id) => document.getElementById(id);
// A courier on shift reports every few seconds; a fix older than five minutes is greyed as stale.
const STALE_MS = 5 * 60 * 1000;
const MAP_KEY = "console-map";  // "shown" or "hidden": the dispatcher's choice on this device
const WIDE = "(min-width: 1001px)";  // console.css: the map beside the board, not below it

export class Fleet {
  constructor(ctx) {
    this.ctx = ctx;
    this.map = null;
    if ($("map-toggle")) {
      $("map-toggle").addEventListener("click", () => this.switchMap());
      this.showMapSwitch();  // the box as it will be, before the board first shows (no shift)
    }
    this.reset();
    setInterval(() => this.render(), 30000);  // fixes grow stale while nothing happens
  }

  reset() {
    this.couriers = new Map();
    this.depots = [];
    this.earnings = new Map();  // shown on request (GET /couriers/{id}/earnings), per courier
    this.chosen = new Set();
    if (this.map) { this.map.couriers.forEach((m) => m.remove()); this.map.couriers.clear(); this.map.setOrders([]); this.map.setRoutes([]); }
    if ($("couriers")) { $("couriers").replaceChildren(); }
  }

  list() { return [...this.couriers.values()].sort((a, b) => a.displayName.localeCompare(b.displayName)); }

  async load() {
    const [{couriers}, {depots}] = await Promise.all([this.ctx.api.get("/couriers"), this.ctx.api.get("/company/depots")]);
    this.couriers = new Map(couriers.map((c) => [c.id, c]));
    this.depots = depots;
    if (this.map) { this.map.setDepots(depots); this.map.resize(); }
    this.render();
    this.ctx.board.render();
    if (this.ctx.planner) { this.ctx.planner.renderCouriers(); }
    this.mapWhenShown();
  }

  // The live map comes after the board: MapLibre (900 KiB of script, fetched only now, signed in)
  // and its WebGL canvas cost a phone seconds of CPU that the rows and their buttons should not wait
  // behind (Lighthouse on a throttled phone: the board's performance 68, 6 s of blocked main thread,
  // with the map made at once; still so when made after the rows, the map being on a phone's first
  // screen). So the map has a switch: shown by default where it sits beside the board (a wide
  // screen), asked for on a phone; the dispatcher's choice is kept on the device. A shown map is
  // made once its box is on screen and the page is idle, the rows painted by then.
  mapWanted() {
    let kept = null;
    try { kept = localStorage.getItem(MAP_KEY); } catch (error) { /* storage off */ }
    if (kept === "shown" || kept === "hidden") { return kept === "shown"; }
    return window.matchMedia(WIDE).matches;
  }

  showMapSwitch() {
    const shown = this.mapWanted();
    const toggle = $("map-toggle");
    if (!toggle) { return; }
    toggle.setAttribute("aria-expanded", String(shown));
    toggle.dataset.t = shown ? "mapHide" : "mapShow";
    toggle.textContent = this.ctx.T[toggle.dataset.t];
    $("live-map").hidden = !shown;
    if (shown && this.map) { this.map.resize(); }
  }

  switchMap() {
    try { localStorage.setItem(MAP_KEY, this.mapWanted() ? "hidden" : "shown"); } catch (error) { /* storage off */ }
    this.showMapSwitch();
    this.mapWhenShown();
  }

  mapWhenShown() {
    this.showMapSwitch();
    if (this.map || this.mapWatch) { return; }
    const box = $("live-map");
    if (!box) { return; }
    this.mapWatch = new IntersectionObserver((entries) => {
      if (!entries.some((entry) => entry.isIntersecting)) { return; }
      this.mapWatch.disconnect();
      const idle = window.requestIdleCallback || ((callback) => setTimeout(callback, 200));
      idle(() => this.makeMap(), {timeout: 2000});
    });
    this.mapWatch.observe(box);
  }

  async makeMap() {
    try { await loadMapLibre(); } catch (error) {  // offline: tried again a little later
      setTimeout(() => { this.mapWatch = null; this.mapWhenShown(); }, 30000);
      return;
    }
    this.mapWatch = null;
    if (this.map || !this.ctx.session) { return; }
    this.map = new LiveMap("live-map", this.ctx.T);
    // What the map shows, as it stands: depots, couriers, the board's open orders, a plan's routes.
    this.map.setDepots(this.depots || []);
    this.render();
    this.ctx.board.render();
    if (this.ctx.planner && this.ctx.planner.plan) { this.ctx.planner.draw(); }
  }

  async refetch(courierId) {
    try {
      const {courier} = await this.ctx.api.get("/couriers/" + courierId);
      const known = this.couriers.get(courierId);
      this.couriers.set(courierId, Object.assign({}, known || {}, courier));
      this.render();
      // The board's courier selectors say who is on shift: redraw them when that changed.
      const shift = (c) => (c && c.shift ? c.shift.status : "off");
      if (!known || shift(known) !== shift(courier)) { this.ctx.board.render(); }
    } catch (error) { /* gone or not ours: the next load settles it */ }
  }

  onEvent(event) {
    const payload = event.payload || {};
    if (event.kind === "courier.location") {
      const courier = this.couriers.get(payload.courierId);
      if (!courier) { this.refetch(payload.courierId); return; }
      courier.location = {lat: payload.lat, lon: payload.lon, capturedAt: payload.capturedAt, accuracyM: payload.accuracyM, source: payload.source};
      this.render();
    } else if (event.kind.startsWith("courier.") || event.kind.startsWith("cash.")) {
      this.refetch(payload.courierId);
    } else if (event.kind.startsWith("order.") && payload.courierId) {
      setTimeout(() => this.refetch(payload.courierId), 300);  // open orders and cash follow the move
    }
  }

  stale(courier) { return !courier.location || Date.now() - new Date(courier.location.capturedAt).getTime() > STALE_MS; }

  shiftLabel(courier) {
    const T = this.ctx.T;
    if (!courier.shift) { return T.offlineCourier; }
    return courier.shift.status === "on_break" ? T.onBreak : T.online;
  }

  render() {
    const T = this.ctx.T;
    const lang = this.ctx.lang;
    const list = $("couriers");
    if (!list) { return; }
    if (this.map) { this.map.relabel(T); }  // a new language: the map's controls and markers follow
    list.replaceChildren(...this.list().map((courier) => {
      const stale = this.stale(courier);
      const li = document.createElement("li");
      li.dataset.courierId = courier.id;
      li.dataset.stale = String(stale);
      li.dataset.shift = courier.shift ? courier.shift.status : "off";
      const pick = document.createElement("input");
      pick.type = "checkbox";
      pick.checked = this.chosen.has(courier.id);
      pick.disabled = !courier.active;
      pick.dataset.chooseCourier = courier.id;
      pick.setAttribute("aria-label", T.choose + " " + courier.displayName);
      pick.addEventListener("change", () => {
        if (pick.checked) { this.chosen.add(courier.id); } else { this.chosen.delete(courier.id); }
        if (this.ctx.planner) { this.ctx.planner.renderCouriers(); }  // the plan panel's choice is this one
      });
      const who = document.createElement("div");
      who.className = "who";
      const name = document.createElement("strong");
      name.textContent = courier.displayName;
      const state = document.createElement("div");
      state.className = "small";
      state.textContent = this.shiftLabel(courier) + (courier.openOrders ? " · " + courier.openOrders + " " + T.openOrders : "");
      const where = document.createElement("div");
      where.className = "small where";
      where.textContent = courier.location ? timeOf(courier.location.capturedAt, lang) + (stale ? " · " + T.staleFix : "") : T.noFix;
      const cash = document.createElement("div");
      cash.className = "small";
      cash.textContent = T.cashOut + amd(courier.outstandingCashAmd, lang);
      who.append(name, state, where, cash);
      const earned = this.earnings.get(courier.id);
      if (earned) {
        const line = document.createElement("div");
        line.className = "small";
        line.dataset.earnings = courier.id;
        line.textContent = T.earnings + ": " + T.todayShort + " " + earned.today.delivered + " " + T.deliveredShort + " · " +
          amd(earned.today.amountAmd, lang) + "; " + T.weekShort + " " + earned.week.delivered + " · " + amd(earned.week.amountAmd, lang);
        who.append(line);
      } else {
        const show = document.createElement("button");
        show.type = "button"; show.className = "small ghost"; show.textContent = T.earnings;
        show.dataset.showEarnings = courier.id;
        show.addEventListener("click", async () => {
          try { this.earnings.set(courier.id, await this.ctx.api.get("/couriers/" + courier.id + "/earnings")); this.render(); } catch (error) { this.ctx.fail(error); }
        });
        who.append(show);
      }
      li.append(pick, who);
      if (courier.shift) {
        const end = document.createElement("button");
        end.type = "button"; end.className = "small ghost"; end.textContent = T.endShift;
        end.dataset.endShift = courier.id;
        end.addEventListener("click", async () => {
          try { await this.ctx.api.post("/couriers/" + courier.id + "/shift/end"); this.refetch(courier.id); } catch (error) { this.ctx.fail(error); }
        });
        li.append(end);
      }
      if (this.map) { this.map.setCourier(courier, stale, courier.displayName + " · " + this.shiftLabel(courier)); }
      return li;
    }));
  }

  showOrders(orders) { if (this.map) { this.map.setOrders(orders); } }
  chosenIds() { return [...this.chosen].filter((id) => this.couriers.has(id)); }
}
