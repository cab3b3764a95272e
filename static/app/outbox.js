// The courier app's outbox in IndexedDB: GPS fixes and status moves wait here until the API has
// them, so nothing is lost without signal and nothing is sent twice.
//
// - Fixes go out in batches of up to 50 (POST /courier/location); the server deduplicates by
//   capturedAt, so a batch resent after a lost answer stores nothing twice.
// - Moves keep the idempotency key they were given when the courier pressed the button, so a retry
//   after a lost answer is answered with the first result (replayed) instead of moving twice. A
//   proof photo waits as a Blob with its move; its upload link is asked for only when sending.
const DB_NAME = "courier-app";
const VERSION = 1;

function open() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, VERSION);
    request.onupgradeneeded = () => {
      const db = request.result;
      if (!db.objectStoreNames.contains("points")) { db.createObjectStore("points", {keyPath: "capturedAt"}); }
      if (!db.objectStoreNames.contains("moves")) { db.createObjectStore("moves", {keyPath: "seq", autoIncrement: true}); }
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

let dbPromise = null;
function db() { dbPromise = dbPromise || open(); return dbPromise; }

async function run(store, mode, work) {
  const database = await db();
  return new Promise((resolve, reject) => {
    const tx = database.transaction(store, mode);
    let result;
    Promise.resolve(work(tx.objectStore(store))).then((value) => { result = value; });
    tx.oncomplete = () => resolve(result);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

function all(request) { return new Promise((resolve, reject) => { request.onsuccess = () => resolve(request.result); request.onerror = () => reject(request.error); }); }

export const outbox = {
  addPoint(point) { return run("points", "readwrite", (store) => { store.put(point); }); },
  async points(limit) { return run("points", "readonly", (store) => all(store.getAll(null, limit))); },
  dropPoints(keys) { return run("points", "readwrite", (store) => { keys.forEach((k) => store.delete(k)); }); },
  addMove(move) { return run("moves", "readwrite", (store) => all(store.add(move))); },
  moves() { return run("moves", "readonly", (store) => all(store.getAll())); },
  updateMove(move) { return run("moves", "readwrite", (store) => { store.put(move); }); },
  dropMove(seq) { return run("moves", "readwrite", (store) => { store.delete(seq); }); },
  async counts() {
    const [points, moves] = await Promise.all([run("points", "readonly", (s) => all(s.count())), run("moves", "readonly", (s) => all(s.count()))]);
    return {points: points, moves: moves};
  },
  async clear() {
    await run("points", "readwrite", (s) => { s.clear(); });
    await run("moves", "readwrite", (s) => { s.clear(); });
  },
};
