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
// A word a page does not have is left out (MapLibre keeps its English one): MapLibre throws on a
// missing label rather than falling back, and an undefined entry would replace its default.
export function mapLocale(texts) {
  const locale = {
    "NavigationControl.ZoomIn": texts.zoomIn,
    "NavigationControl.ZoomOut": texts.zoomOut,
    "NavigationControl.ResetBearing": texts.resetBearing,
    "AttributionControl.ToggleAttribution": texts.attribution,
    "Map.Title": texts.map,
    "Marker.Title": texts.map,
  };
  Object.keys(locale).forEach((key) => { if (!locale[key]) { delete locale[key]; } });
  return locale;
}

// A new language for a map already on screen. MapLibre reads its locale only when a control is
// added and has no public way to change it, so the labels it wrote are rewritten here (the zoom
// and compass buttons, the attribution button, the canvas's name) and its table is updated for
// whatever it creates later.
export function relabelMap(map, locale) {
  Object.assign(map._locale, locale);
  const container = map.getContainer();
  const label = (selector, key) => {
    if (!locale[key]) { return; }
    container.querySelectorAll(selector).forEach((element) => {
      element.title = locale[key];
      element.setAttribute("aria-label", locale[key]);
    });
  };
  label(".maplibregl-ctrl-zoom-in", "NavigationControl.ZoomIn");
  label(".maplibregl-ctrl-zoom-out", "NavigationControl.ZoomOut");
  label(".maplibregl-ctrl-compass", "NavigationControl.ResetBearing");
  label(".maplibregl-ctrl-attrib-button", "AttributionControl.ToggleAttribution");
  if (locale["Map.Title"]) { map.getCanvas().setAttribute("aria-label", locale["Map.Title"]); }
}
