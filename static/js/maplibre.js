// MapLibre GL (static/vendor/maplibre-gl/, 930 KiB of script) and the appliance's map helpers
// (map.js: TrackingMap), fetched only when a page is about to show a map and never before its
// first paint: the pages call loadMapLibre() and create their map when it resolves. Loaded once
// per page; the URLs below carry their content hash as served (cached for a year).
let loading = null;

function add(tag, attributes) {
  return new Promise((resolve, reject) => {
    const element = document.createElement(tag);
    Object.assign(element, attributes);
    element.onload = () => resolve();
    element.onerror = () => reject(new Error("could not load " + (attributes.src || attributes.href)));
    document.head.append(element);
  });
}

export function loadMapLibre() {
  if (!loading) {
    loading = Promise.all([
      add("link", {rel: "stylesheet", href: "/static/vendor/maplibre-gl/maplibre-gl.css"}),
      add("script", {src: "/static/vendor/maplibre-gl/maplibre-gl.js", async: false})
        .then(() => add("script", {src: "/static/js/map.js", async: false})),
    ]).catch((error) => { loading = null; throw error; });
  }
  return loading;
}

// MapLibre's control labels in the page's language (its `locale` option), from the page's words.
export function mapLocale(texts) {
  return {
    "NavigationControl.ZoomIn": texts.zoomIn,
    "NavigationControl.ZoomOut": texts.zoomOut,
    "NavigationControl.ResetBearing": texts.resetBearing,
    "AttributionControl.ToggleAttribution": texts.attribution,
    "Map.Title": texts.map,
    "Marker.Title": texts.map,
  };
}
