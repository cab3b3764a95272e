// A small reusable map for the tracking page and the courier app: MapLibre GL (static/vendor/
// maplibre-gl/, loaded before this file by static/js/maplibre.js) over the appliance's vector tiles and style (/map/style.json), with a courier
// marker, a destination marker and a route line from a precision-6 encoded polyline. No build step.
//
//   const map = new TrackingMap("map", {destination: {lat, lon}, brandColor: "#1F6FEB",
//                                       locale: {...MapLibre's control labels}, labels: {courier, destination}});
//   map.update({courier: {lat, lon} | null, destination: {lat, lon}, route: "polyline6" | null});
//   // or piece by piece: map.setCourier(point), map.setDestination(point), map.setRoute(text)
//
// Markers are DOM elements with data-marker="courier" / "destination"; map.tilesLoaded counts
// vector tiles loaded and map.errors collects map errors (both for tests and diagnostics).
(function (global) {
  "use strict";

  // Google's encoded polyline algorithm; OSRM and Valhalla use precision 6. Returns [lon, lat] pairs.
  function decodePolyline(text, precision) {
    const factor = Math.pow(10, precision === undefined ? 6 : precision);
    const points = [];
    let index = 0, lat = 0, lon = 0;
    while (index < text.length) {
      for (let axis = 0; axis < 2; axis++) {
        let result = 0, shift = 0, byte;
        do {
          byte = text.charCodeAt(index++) - 63;
          result += (byte & 0x1f) * Math.pow(2, shift);  // no 32-bit overflow on long deltas
          shift += 5;
        } while (byte >= 0x20 && index < text.length);
        const delta = (result % 2) ? -(result + 1) / 2 : result / 2;
        if (axis === 0) { lat += delta; } else { lon += delta; }
      }
      points.push([lon / factor, lat / factor]);
    }
    return points;
  }

  function markerElement(color, name, label) {
    const element = document.createElement("div");
    element.className = "map-marker map-marker-" + name;
    element.setAttribute("role", "img");
    element.setAttribute("aria-label", label || name);
    element.dataset.marker = name;
    element.style.cssText = "width:18px;height:18px;border-radius:50%;border:3px solid #fff;" +
      "box-shadow:0 1px 4px rgba(0,0,0,.4);background:" + color;
    return element;
  }

  function lngLat(point) { return [point.lon, point.lat]; }

  function TrackingMap(container, options) {
    options = options || {};
    this.brand = options.brandColor || "#1F6FEB";
    this.loaded = false;
    this.tilesLoaded = 0;
    this.errors = [];
    this.routeCoordinates = [];
    this.courier = null;
    this.destination = null;
    this.fitted = false;
    this.labels = options.labels || {};
    const start = options.destination || options.courier;
    this.map = new maplibregl.Map({
      container: container,
      style: options.styleUrl || "/map/style.json",
      center: start ? lngLat(start) : undefined,
      zoom: start ? 14 : undefined,
      attributionControl: {compact: true},
      cooperativeGestures: false,
      locale: options.locale || {},
    });
    this.map.addControl(new maplibregl.NavigationControl({showCompass: false}), "top-right");
    if (options.destination) { this.setDestination(options.destination); }
    if (options.courier) { this.setCourier(options.courier); }
    const self = this;
    this.map.on("data", function (event) {
      if (event.dataType === "source" && event.tile && event.sourceId !== "route") { self.tilesLoaded++; }
    });
    this.map.on("error", function (event) {
      self.errors.push(String((event.error && event.error.message) || event.error || event));
    });
    this.map.on("load", function () {
      self.map.addSource("route", {type: "geojson", data: self._routeData()});
      self.map.addLayer({id: "route", type: "line", source: "route",
                         layout: {"line-cap": "round", "line-join": "round"},
                         paint: {"line-color": self.brand, "line-width": 5, "line-opacity": 0.85}});
      self.loaded = true;
      self._fit(false);
    });
  }

  TrackingMap.prototype._routeData = function () {
    const line = this.routeCoordinates;
    return {type: "FeatureCollection", features: line.length > 1 ? [
      {type: "Feature", properties: {}, geometry: {type: "LineString", coordinates: line}}] : []};
  };

  // Show the courier at {lat, lon}, or hide the courier marker with null.
  TrackingMap.prototype.setCourier = function (point) {
    if (!point) {
      if (this.courier) { this.courier.remove(); this.courier = null; }
      return;
    }
    if (!this.courier) {
      this.courier = new maplibregl.Marker({element: markerElement(this.brand, "courier", this.labels.courier)})
        .setLngLat(lngLat(point)).addTo(this.map);
    } else {
      this.courier.setLngLat(lngLat(point));
    }
  };

  TrackingMap.prototype.setDestination = function (point) {
    if (!point) {
      if (this.destination) { this.destination.remove(); this.destination = null; }
      return;
    }
    if (!this.destination) {
      this.destination = new maplibregl.Marker({element: markerElement("#d92d20", "destination", this.labels.destination)})
        .setLngLat(lngLat(point)).addTo(this.map);
    } else {
      this.destination.setLngLat(lngLat(point));
    }
  };

  // The markers' names for assistive technology, in the page's language.
  TrackingMap.prototype.setLabels = function (labels) {
    this.labels = labels || {};
    if (this.courier) { this.courier.getElement().setAttribute("aria-label", this.labels.courier || "courier"); }
    if (this.destination) { this.destination.getElement().setAttribute("aria-label", this.labels.destination || "destination"); }
  };

  // The route as a precision-6 encoded polyline (null or "" clears it).
  TrackingMap.prototype.setRoute = function (encoded) {
    this.routeCoordinates = encoded ? decodePolyline(encoded, 6) : [];
    if (this.loaded) { this.map.getSource("route").setData(this._routeData()); }
  };

  // Frame the courier and the destination: the first time both are known, and afterwards only
  // when one of them has left the visible area (so a reader's own panning is kept otherwise).
  TrackingMap.prototype._fit = function (onlyIfOutside) {
    if (!this.loaded) { return; }
    const points = [this.courier, this.destination].filter(Boolean).map(function (m) { return m.getLngLat(); });
    if (!points.length) { return; }
    if (onlyIfOutside && this.fitted) {
      const view = this.map.getBounds();
      if (points.every(function (p) { return view.contains(p); })) { return; }
    }
    if (points.length === 1) {
      this.map.jumpTo({center: points[0]});
    } else {
      const bounds = new maplibregl.LngLatBounds(points[0], points[0]);
      points.forEach(function (p) { bounds.extend(p); });
      this.map.fitBounds(bounds, {padding: 60, maxZoom: 16, duration: 0});
      this.fitted = true;
    }
  };

  // Apply a tracking view: {courier: {lat, lon} | null, destination: {lat, lon}, route: polyline6}.
  TrackingMap.prototype.update = function (view) {
    this.setCourier(view.courier || null);
    if (view.destination) { this.setDestination(view.destination); }
    this.setRoute(view.route || null);
    this._fit(true);
  };

  TrackingMap.decodePolyline = decodePolyline;
  global.TrackingMap = TrackingMap;
  global.decodePolyline = decodePolyline;
})(window);
