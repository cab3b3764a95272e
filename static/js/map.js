// A small reusable map for the tracking page: MapLibre GL over the appliance's vector tiles, with a
// courier marker, a destination marker and a route line from a precision-6 polyline. No build step.
(function (global) {
  "use strict";

  function decodePolyline(text, precision) {
    const factor = Math.pow(10, precision || 6);
    const points = [];
    let index = 0, lat = 0, lon = 0;
    while (index < text.length) {
      for (const axis of [0, 1]) {
        let result = 0, shift = 0, byte;
        do {
          byte = text.charCodeAt(index++) - 63;
          result |= (byte & 0x1f) << shift;
          shift += 5;
        } while (byte >= 0x20);
        const delta = (result & 1) ? ~(result >> 1) : (result >> 1);
        if (axis === 0) { lat += delta; } else { lon += delta; }
      }
      points.push([lon / factor, lat / factor]);
    }
    return points;
  }

  function dot(color, label) {
    const element = document.createElement("div");
    element.className = "map-marker";
    element.setAttribute("aria-label", label);
    element.dataset.marker = label;
    element.style.cssText = "width:18px;height:18px;border-radius:50%;border:3px solid #fff;" +
      "box-shadow:0 1px 4px rgba(0,0,0,.4);background:" + color;
    return element;
  }

  function TrackingMap(container, options) {
    this.brand = options.brandColor || "#1F6FEB";
    this.loaded = false;
    this.tilesLoaded = 0;
    this.map = new maplibregl.Map({
      container: container,
      style: options.styleUrl || "/map/style.json",
      center: [options.destination.lon, options.destination.lat],
      zoom: 14,
      attributionControl: {compact: true},
    });
    this.destination = new maplibregl.Marker({element: dot("#d92d20", "destination")})
      .setLngLat([options.destination.lon, options.destination.lat]).addTo(this.map);
    this.courier = null;
    const self = this;
    this.map.on("data", function (event) { if (event.dataType === "source" && event.tile) { self.tilesLoaded++; } });
    this.map.on("load", function () {
      self.map.addSource("route", {type: "geojson", data: {type: "FeatureCollection", features: []}});
      self.map.addLayer({id: "route", type: "line", source: "route",
                         paint: {"line-color": self.brand, "line-width": 5, "line-opacity": 0.85}});
      self.loaded = true;
      if (self.pending) { self.update(self.pending); }
    });
  }

  TrackingMap.prototype.update = function (view) {
    if (!this.loaded) { this.pending = view; return; }
    const map = this.map;
    if (view.courier) {
      const at = [view.courier.lon, view.courier.lat];
      if (!this.courier) {
        this.courier = new maplibregl.Marker({element: dot(this.brand, "courier")}).setLngLat(at).addTo(map);
      } else {
        this.courier.setLngLat(at);
      }
    } else if (this.courier) {
      this.courier.remove();
      this.courier = null;
    }
    const line = view.route ? decodePolyline(view.route, 6) : [];
    map.getSource("route").setData({type: "FeatureCollection", features: line.length ? [
      {type: "Feature", properties: {}, geometry: {type: "LineString", coordinates: line}}] : []});
    if (view.courier) {
      const bounds = new maplibregl.LngLatBounds();
      bounds.extend([view.courier.lon, view.courier.lat]);
      bounds.extend([view.destination.lon, view.destination.lat]);
      map.fitBounds(bounds, {padding: 60, maxZoom: 16, duration: 0});
    }
  };

  global.TrackingMap = TrackingMap;
  global.decodePolyline = decodePolyline;
})(window);
