// Fees and shops (issue 47): delivery fee zones drawn on the map (click to add a corner, save;
// edit loads a zone's corners back, delete asks first) with their rules, and the shops' statements
// (a shop, Yerevan days; CSV, .xlsx and a printable page; an owner marks a period paid). A client
// of the JSON API only: docs/fees.md and docs/statements.md. Words: texts-money.js.
/* global maplibregl */
import {ApiError, OfflineError} from "/static/js/api.js";
import {amd} from "/static/js/i18n.js";
import {loadMapLibre, mapLocale} from "/static/js/maplibre.js";

const $ = (id) => document.getElementById(id);
const fill = (text, values) => text.replace(/\{(\w+)\}/g, (_, k) => String(values[k]));
const EMPTY = {type: "FeatureCollection", features: []};

function yerevanToday() {
  return new Intl.DateTimeFormat("en-CA", {timeZone: "Asia/Yerevan"}).format(new Date());
}
function dayAfter(day) {
  const d = new Date(day + "T00:00:00Z");
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

export class Money {
  constructor(ctx) {
    this.ctx = ctx;
    this.map = null;
    this.zones = [];
    this.corners = [];  // [lon, lat] of the zone being drawn
    this.editing = null;  // the id of the zone whose corners are being changed
    this.statement = null;
    $("fee-form").addEventListener("submit", (e) => { e.preventDefault(); this.save(); });
    $("fee-undo").addEventListener("click", () => { this.corners.pop(); this.drawDraft(); });
    $("fee-clear").addEventListener("click", () => this.resetForm());
    $("statement-form").addEventListener("submit", (e) => { e.preventDefault(); this.showStatement(); });
    $("st-pay").addEventListener("click", () => this.pay());
    document.querySelectorAll("[data-statement]").forEach((b) => b.addEventListener("click", () => this.download(b.dataset.statement, b)));
    const today = yerevanToday();
    $("st-from").value = today;
    $("st-to").value = today;
  }

  get T() { return this.ctx.T; }

  async show() {
    const ready = this.map ? null : loadMapLibre().then(() => true, () => false);
    const [{zones}, {shops}] = await Promise.all([this.ctx.api.get("/company/fee-zones"), this.ctx.api.get("/shops")]).catch((e) => { this.ctx.fail(e); return [{zones: []}, {shops: []}]; });
    this.zones = zones;
    if (ready && await ready && !this.map) { this.makeMap(); }
    if (this.map) { this.map.resize(); }
    const select = $("st-shop");
    const chosen = select.value;
    select.replaceChildren(...shops.map((s) => { const o = document.createElement("option"); o.value = s.id; o.textContent = s.name; return o; }));
    if (chosen) { select.value = chosen; }
    $("st-error").textContent = shops.length ? "" : this.T.stNoShops;
    $("st-pay-row").hidden = this.ctx.session.role !== "owner";
    this.render();
  }

  makeMap() {
    this.map = new maplibregl.Map({container: "fee-map", style: "/map/style.json", center: [44.5136, 40.1811], zoom: 12,
                                   attributionControl: {compact: true}, locale: mapLocale(Object.assign({}, this.T, {map: this.T.feeZones}))});
    this.map.addControl(new maplibregl.NavigationControl({showCompass: false}), "top-right");
    this.map.on("load", () => {
      this.map.addSource("fee-zones", {type: "geojson", data: EMPTY});
      this.map.addLayer({id: "fee-zones", type: "fill", source: "fee-zones", paint: {"fill-color": "#1F6FEB", "fill-opacity": 0.15}});
      this.map.addLayer({id: "fee-zones-edge", type: "line", source: "fee-zones", paint: {"line-color": "#1F6FEB", "line-width": 2}});
      this.map.addSource("fee-draft", {type: "geojson", data: EMPTY});
      this.map.addLayer({id: "fee-draft", type: "fill", source: "fee-draft", filter: ["==", "$type", "Polygon"], paint: {"fill-color": "#F79009", "fill-opacity": 0.25}});
      this.map.addLayer({id: "fee-draft-edge", type: "line", source: "fee-draft", paint: {"line-color": "#F79009", "line-width": 2}});
      this.map.addLayer({id: "fee-draft-corners", type: "circle", source: "fee-draft", filter: ["==", "$type", "Point"], paint: {"circle-radius": 5, "circle-color": "#F79009"}});
      this.loaded = true;
      this.drawZones();
      this.drawDraft();
    });
    this.map.on("click", (event) => {
      if (this.corners.length >= 200) { return; }
      this.corners.push([event.lngLat.lng, event.lngLat.lat]);
      this.drawDraft();
    });
    window.feeMap = this;  // tests and diagnostics
  }

  drawZones() {
    if (!this.loaded) { return; }
    this.map.getSource("fee-zones").setData({type: "FeatureCollection", features: this.zones.filter((z) => z.id !== this.editing).map((z) => ({
      type: "Feature", properties: {id: z.id, name: z.name},
      geometry: {type: "Polygon", coordinates: [[...z.polygon.map((p) => [p.lon, p.lat]), [z.polygon[0].lon, z.polygon[0].lat]]]}}))});
  }

  drawDraft() {
    $("fee-vertices").textContent = fill(this.T.feeCorners, {n: this.corners.length});
    if (!this.loaded) { return; }
    const c = this.corners;
    const features = c.map((p) => ({type: "Feature", properties: {}, geometry: {type: "Point", coordinates: p}}));
    if (c.length >= 3) { features.push({type: "Feature", properties: {}, geometry: {type: "Polygon", coordinates: [[...c, c[0]]]}}); } else if (c.length === 2) { features.push({type: "Feature", properties: {}, geometry: {type: "LineString", coordinates: c}}); }
    this.map.getSource("fee-draft").setData({type: "FeatureCollection", features});
  }

  resetForm() {
    this.corners = [];
    this.editing = null;
    $("fee-form").reset();
    $("fee-error").textContent = "";
    this.drawZones();
    this.drawDraft();
  }

  edit(zone) {
    this.editing = zone.id;
    this.corners = zone.polygon.map((p) => [p.lon, p.lat]);
    $("fee-name").value = zone.name;
    $("fee-base").value = zone.baseFeeAmd;
    $("fee-km").value = zone.perKmAmd;
    $("fee-threshold").value = zone.weightThresholdKg;
    $("fee-kg").value = zone.perKgAmd;
    $("fee-cod").value = zone.codBasisPoints;
    this.drawZones();
    this.drawDraft();
  }

  async save() {
    $("fee-error").textContent = "";
    if (this.corners.length < 3) { $("fee-error").textContent = this.T.feeNeedCorners; return; }
    const body = {
      name: $("fee-name").value.trim(),
      polygon: this.corners.map(([lon, lat]) => ({lat, lon})),
      baseFeeAmd: Number($("fee-base").value || 0), perKmAmd: Number($("fee-km").value || 0),
      weightThresholdKg: Number($("fee-threshold").value || 0), perKgAmd: Number($("fee-kg").value || 0),
      codBasisPoints: Number($("fee-cod").value || 0),
    };
    try {
      if (this.editing) { await this.ctx.api.patch("/company/fee-zones/" + this.editing, body); } else { await this.ctx.api.post("/company/fee-zones", body); }
      this.zones = (await this.ctx.api.get("/company/fee-zones")).zones;
      this.resetForm();
      this.render();
      this.ctx.toast(this.T.feeSaved);
    } catch (error) { $("fee-error").textContent = this.ctx.explain(error); }
  }

  async remove(zone) {
    if (!window.confirm(this.T.feeDeleteConfirm)) { return; }
    try {
      await this.ctx.api.del("/company/fee-zones/" + zone.id);
      this.zones = this.zones.filter((z) => z.id !== zone.id);
      this.render();
    } catch (error) { this.ctx.fail(error); }
  }

  render() {
    if (!$("fee-zones")) { return; }
    const T = this.T, lang = this.ctx.lang;
    $("fee-vertices").textContent = fill(T.feeCorners, {n: this.corners.length});
    $("fee-zones").tBodies[0].replaceChildren(...this.zones.map((z) => {
      const row = document.createElement("tr");
      row.dataset.zoneId = z.id;
      const name = document.createElement("td");
      name.textContent = z.name;
      const rules = document.createElement("td");
      rules.textContent = [amd(z.baseFeeAmd, lang), z.perKmAmd ? amd(z.perKmAmd, lang) + "/km" : "",
        z.perKgAmd ? amd(z.perKgAmd, lang) + "/kg > " + z.weightThresholdKg + " kg" : "",
        z.codBasisPoints ? (z.codBasisPoints / 100) + " % COD" : ""].filter(Boolean).join(" · ");
      const actions = document.createElement("td");
      const edit = document.createElement("button");
      edit.type = "button"; edit.className = "small ghost"; edit.textContent = T.feeEdit;
      edit.addEventListener("click", () => this.edit(z));
      const del = document.createElement("button");
      del.type = "button"; del.className = "small ghost"; del.textContent = T.feeDelete;
      del.addEventListener("click", () => this.remove(z));
      actions.append(edit, " ", del);
      row.append(name, rules, actions);
      return row;
    }));
    this.drawZones();
    this.renderStatement();
  }

  range() {
    const from = $("st-from").value, last = $("st-to").value;
    if (!from || !last || !$("st-shop").value) { return null; }
    return "from=" + from + "&to=" + dayAfter(last);
  }

  async showStatement() {
    const query = this.range();
    if (!query) { return; }
    $("st-error").textContent = "";
    try {
      this.statement = await this.ctx.api.get("/shops/" + $("st-shop").value + "/statement?" + query);
      this.renderStatement();
    } catch (error) { $("st-error").textContent = this.ctx.explain(error); }
  }

  renderStatement() {
    const s = this.statement;
    $("st-result").hidden = !s;
    if (!s) { return; }
    const T = this.T, lang = this.ctx.lang;
    $("st-delivered").textContent = s.delivered;
    $("st-returned").textContent = s.returned;
    $("st-collected").textContent = amd(s.codCollectedAmd, lang);
    $("st-fees").textContent = amd(s.feesAmd, lang);
    $("st-net").textContent = amd(s.netAmd, lang);
    $("st-cash").textContent = s.cash.balanced
      ? fill(T.stBalanced, {handed: amd(s.cash.handedOverAmd, lang), held: amd(s.cash.withCouriersAmd, lang)})
      : fill(T.stUnbalanced, {ledger: amd(s.cash.ledgerCollectedAmd, lang)});
    $("st-cash").className = s.cash.balanced ? "small muted" : "small error";
    $("st-paid").replaceChildren(...s.remittances.map((r) => {
      const item = document.createElement("li");
      item.textContent = T.stPaid + ": " + r.from + " – " + r.to + " · " + amd(r.netAmd, lang) + " · " + r.reference;
      return item;
    }));
  }

  async pay() {
    const reference = $("st-reference").value.trim();
    const from = $("st-from").value, last = $("st-to").value;
    if (!reference || !from || !last) { $("st-reference").focus(); return; }
    try {
      await this.ctx.api.post("/shops/" + $("st-shop").value + "/remittances", {from, to: dayAfter(last), reference});
      $("st-reference").value = "";
      await this.showStatement();
    } catch (error) { $("st-error").textContent = this.ctx.explain(error); }
  }

  // As the reports' downloads: fetched with the bearer token, then saved (or, for the printable
  // page, opened in a new tab) from a blob.
  async download(format, button) {
    const query = this.range();
    if (!query) { return; }
    const api = this.ctx.api;
    button.disabled = true;
    try {
      let response;
      for (let attempt = 0; ; attempt++) {
        try {
          response = await fetch("/shops/" + $("st-shop").value + "/statement." + format + "?" + query,
                                 {headers: {"Authorization": await api.authorization(), "Accept-Language": this.ctx.lang}, cache: "no-store"});
        } catch (e) { throw new OfflineError(e); }
        if (response.status === 401 && attempt === 0) { await api.refresh(); continue; }
        break;
      }
      if (!response.ok) { throw new ApiError(response.status, await response.json().catch(() => null)); }
      const url = URL.createObjectURL(await response.blob());
      const link = document.createElement("a");
      link.href = url;
      if (format === "html") { link.target = "_blank"; link.rel = "noopener"; } else { link.download = "statement." + format; }
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
    } catch (error) {
      $("st-error").textContent = this.ctx.explain(error);
    } finally { button.disabled = false; }
  }
}
