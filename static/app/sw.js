// The courier app's service worker: keeps the app shell so that the app opens without signal.
// Shell files are fetched from the network first (a new release shows at once) and from the
// cache when the network fails. The API is never cached: orders, moves and positions go to the
// server, and the page's own outbox (IndexedDB) holds what waits for the connection.
const CACHE = "courier-shell-v2";
const SHELL = [
  "/app/", "/app/app.js", "/app/app.css", "/app/texts.js", "/app/outbox.js", "/app/scan.js", "/app/manifest.webmanifest",
  "/app/icon.svg", "/app/icon-192.png", "/static/js/api.js", "/static/js/i18n.js", "/static/js/events.js", "/static/js/maplibre.js", "/static/js/map.js",
  "/static/vendor/maplibre-gl/maplibre-gl.js", "/static/vendor/maplibre-gl/maplibre-gl.css",
  "/static/vendor/zxing-library/zxing.min.js",  // the parcel scan works without signal too
];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((key) => key !== CACHE).map((key) => caches.delete(key))))
    .then(() => self.clients.claim()));
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) { return; }
  const shell = SHELL.includes(url.pathname) || request.mode === "navigate" && url.pathname.startsWith("/app/");
  if (!shell) { return; }  // API calls, tiles and objects go straight to the network
  event.respondWith(fetch(request).then((response) => {
    if (response.ok) { const copy = response.clone(); caches.open(CACHE).then((cache) => cache.put(url.pathname, copy)); }
    return response;
  }).catch(() => caches.match(url.pathname).then((cached) => cached || caches.match("/app/"))));
});
