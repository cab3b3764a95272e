// Maps of the console, MapLibre GL (static/vendor/) over the appliance's own tiles and style
// (/map/style.json), as the tracking page: the pin picker of the order form and the live map of
// couriers, depots, open orders and a suggested plan's routes.
/* global maplibregl */
import {mapLocale, relabelMap} from "/static/js/maplibre.js";

const STYLE = "/map/style.json";

// MapLibre's own labels (zoom buttons, attribution, the map's name) in the console's words (T);
// title: what this map is called (the canvas is a region of its own for assistive technology).
const localeOf = (T, title) => mapLocale(Object.assign({}, T, {map: title}));

function marker(kind, label) {
  const element = document.createElement("div");
  element.className = "map-marker " + kind;
  element.dataset.marker = kind;
  element.setAttribute("role", "img");
  element.setAttribute("aria-label", label || kind);
  element.title = label || kind;
  return element;
}

const at = (point) => [point.lon, point.lat];

// Click the map or drag the pin; onPick({lat, lon}) is told each time. The pin is the truth.
export class PinPicker {
  constructor(container, centre, onPick, T) {
    this.onPick = onPick;
    this.T = T;
    this.map = new maplibregl.Map({container: container, style: STYLE, center: at(centre), zoom: 14, attributionControl: {compact: true},
                                   locale: localeOf(T, T.pinMapLabel)});
    this.map.addControl(new maplibregl.NavigationControl({showCompass: false}), "top-right");
    this.pin = null;
    this.map.on("click", (event) => { this.set({lat: event.lngLat.lat, lon: event.lngLat.lng}, true); });
    window.pinPicker = this;
  }

  set(point, tell) {
    if (!this.pin) {
      this.pin = new maplibregl.Marker({element: marker("pin", this.T.pinMarker), draggable: true}).setLngLat(at(point)).addTo(this.map);
      this.pin.on("dragend", () => { const p = this.pin.getLngLat(); this.onPick({lat: p.lat, lon: p.lng}); });
    } else { this.pin.setLngLat(at(point)); }
    if (tell) { this.onPick(point); } else { this.map.jumpTo({center: at(point)}); }
  }

  // The console's language changed (the form is opened again in it).
  relabel(T) {
    if (this.T === T) { return; }
    this.T = T;
    relabelMap(this.map, localeOf(T, T.pinMapLabel));
    if (this.pin) { this.pin.getElement().setAttribute("aria-label", T.pinMarker); this.pin.getElement().title = T.pinMarker; }
  }

  clear() { if (this.pin) { this.pin.remove(); this.pin = null; } }
  resize() { this.map.resize(); }
}

export const LANE_COLOURS = ["#1F6FEB", "#DD2590", "#12B76A", "#F79009", "#7A5AF8", "#0E9384", "#E04F16", "#475467"];

// The live map: couriers (position, shift state, stale fixes greyed), depots, order pins and plan
// routes. Markers carry data-marker and data-id for tests and assistive technology.
export class LiveMap {
  constructor(container, T) {
    this.T = T;
    this.map = new maplibregl.Map({container: container, style: STYLE, center: [44.5136, 40.1811], zoom: 12, attributionControl: {compact: true},
                                   locale: localeOf(T, T.liveMapLabel)});
    this.map.addControl(new maplibregl.NavigationControl({showCompass: false}), "top-right");
    this.couriers = new Map();
    this.depots = [];
    this.depotList = [];
    this.orderList = [];
    this.orders = new Map();
    this.loaded = false;
    this.tilesLoaded = 0;
    this.routes = {type: "FeatureCollection", features: []};
    this.fitted = false;
    this.map.on("data", (event) => { if (event.dataType === "source" && event.tile && event.sourceId !== "plan") { this.tilesLoaded++; } });
    this.map.on("load", () => {
      this.map.addSource("plan", {type: "geojson", data: this.routes});
      this.map.addLayer({id: "plan", type: "line", source: "plan", layout: {"line-cap": "round", "line-join": "round"},
                         paint: {"line-color": ["get", "colour"], "line-width": 4, "line-opacity": 0.85}});
      this.loaded = true;
    });
    window.liveMap = this;
  }

  // courier: {id, displayName, location, shift}; stale: the fix is old.
  setCourier(courier, stale, label) {
    const existing = this.couriers.get(courier.id);
    if (!courier.location) { if (existing) { existing.remove(); this.couriers.delete(courier.id); } return; }
    let m = existing;
    if (!m) {
      m = new maplibregl.Marker({element: marker("courier", courier.displayName)}).setLngLat(at(courier.location)).addTo(this.map);
      this.couriers.set(courier.id, m);
    } else { m.setLngLat(at(courier.location)); }
    const element = m.getElement();
    element.dataset.id = courier.id;
    element.dataset.lat = String(courier.location.lat);
    element.dataset.lon = String(courier.location.lon);
    element.classList.toggle("stale", Boolean(stale));
    element.classList.toggle("on_break", Boolean(courier.shift && courier.shift.status === "on_break"));
    element.title = this.T.courierMarker + " " + (label || courier.displayName);
    element.setAttribute("aria-label", element.title);
    if (!this.fitted && this.loaded) { this.fitted = true; this.map.jumpTo({center: at(courier.location)}); }
  }

  setDepots(depots) {
    this.depotList = depots;
    this.depots.forEach((m) => m.remove());
    this.depots = depots.map((d) => {
      const m = new maplibregl.Marker({element: marker("depot", this.T.depotMarker + " " + d.name)}).setLngLat(at(d.point)).addTo(this.map);
      m.getElement().dataset.id = d.id;
      return m;
    });
    if (depots.length && !this.fitted) { this.map.jumpTo({center: at(depots[0].point)}); }
  }

  setOrders(orders) {
    this.orderList = orders;
    const keep = new Set();
    orders.forEach((order) => {
      keep.add(order.id);
      let m = this.orders.get(order.id);
      if (!m) {
        m = new maplibregl.Marker({element: marker("order", order.publicId)}).setLngLat(at(order.pin)).addTo(this.map);
        this.orders.set(order.id, m);
      } else { m.setLngLat(at(order.pin)); }
      const element = m.getElement();
      element.dataset.id = order.id;
      element.dataset.status = order.status;
      element.classList.toggle("done", order.status === "delivered");
      // Its stop number in the courier's run once it has one (a plan applied, a hand-assignment).
      const stop = order.courierId && order.sequence && order.status !== "delivered" ? String(order.sequence) : "";
      element.classList.toggle("numbered", Boolean(stop));
      element.textContent = stop;
      if (stop) { element.dataset.stop = stop; } else { delete element.dataset.stop; }
      element.setAttribute("aria-label", this.T.orderMarker + " " + order.publicId + (stop ? " · " + this.T.stopMarker + " " + stop : ""));
      element.title = element.getAttribute("aria-label");
    });
    [...this.orders.keys()].forEach((id) => { if (!keep.has(id)) { this.orders.get(id).remove(); this.orders.delete(id); } });
  }

  // lines: [{colour, coordinates: [[lon, lat], ...]}]
  setRoutes(lines) {
    this.routes = {type: "FeatureCollection", features: lines.filter((l) => l.coordinates.length > 1).map((l) => (
      {type: "Feature", properties: {colour: l.colour}, geometry: {type: "LineString", coordinates: l.coordinates}}))};
    if (this.loaded) { this.map.getSource("plan").setData(this.routes); }
    else { this.map.once("load", () => this.map.getSource("plan").setData(this.routes)); }
    const points = lines.flatMap((l) => l.coordinates);
    if (points.length > 1) {  // frame the plan
      const bounds = points.reduce((b, p) => b.extend(p), new maplibregl.LngLatBounds(points[0], points[0]));
      this.map.fitBounds(bounds, {padding: 50, maxZoom: 16, duration: 0});
    }
  }

  // The console's language changed: MapLibre's controls and the markers' names follow (the
  // couriers' names are set again by the fleet's next render, which comes with the change).
  relabel(T) {
    if (this.T === T) { return; }
    this.T = T;
    relabelMap(this.map, localeOf(T, T.liveMapLabel));
    this.depots.forEach((m, i) => {  // in place: setDepots would move the view
      const name = T.depotMarker + " " + this.depotList[i].name;
      m.getElement().setAttribute("aria-label", name); m.getElement().title = name;
    });
    this.setOrders(this.orderList);
  }

  resize() { this.map.resize(); }
}
