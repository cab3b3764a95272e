// Languages of the console and the courier app: Armenian first, then Russian and English. Until a
// user signs in the page follows ?lang=, this device's earlier choice, then the browser; a signed-in
// user's own language (GET /me, changed with PATCH /me) wins, so it follows them between devices.

export const LANGUAGES = ["hy", "ru", "en"];
const KEY = "appliance.lang";

export function initialLanguage() {
  const asked = new URLSearchParams(location.search).get("lang");
  let kept = null;
  try { kept = localStorage.getItem(KEY); } catch (e) { /* storage off */ }
  const browser = (navigator.language || "").slice(0, 2);
  return [asked, kept, browser].find((l) => l && LANGUAGES.includes(l)) || "hy";
}

export function rememberLanguage(lang) {
  try { localStorage.setItem(KEY, lang); } catch (e) { /* storage off */ }
}

// Fill every [data-t] (text), [data-t-placeholder], [data-t-label] (aria-label) and [data-t-title]
// under root from T, and mark the language buttons.
export function applyTexts(root, T, lang) {
  document.documentElement.lang = lang;
  root.querySelectorAll("[data-t]").forEach((el) => { if (T[el.dataset.t] !== undefined) { el.textContent = T[el.dataset.t]; } });
  root.querySelectorAll("[data-t-placeholder]").forEach((el) => { el.placeholder = T[el.dataset.tPlaceholder] || ""; });
  root.querySelectorAll("[data-t-label]").forEach((el) => { el.setAttribute("aria-label", T[el.dataset.tLabel] || ""); });
  root.querySelectorAll("[data-t-title]").forEach((el) => { el.title = T[el.dataset.tTitle] || ""; });
  root.querySelectorAll("[data-lang]").forEach((b) => { b.setAttribute("aria-pressed", String(b.dataset.lang === lang)); });
}

// Deliveries happen in Armenia: times are Yerevan's (UTC+4, no summer time) whatever the device's zone.
export const ZONE = "Asia/Yerevan";

export function timeOf(iso, lang) {
  if (!iso) { return ""; }
  return new Date(iso).toLocaleTimeString(lang, {hour: "2-digit", minute: "2-digit", timeZone: ZONE});
}

export function yerevanDate(date) {
  // YYYY-MM-DD of the Yerevan day containing date.
  const parts = new Intl.DateTimeFormat("en-CA", {timeZone: ZONE, year: "numeric", month: "2-digit", day: "2-digit"}).formatToParts(date || new Date());
  const get = (type) => parts.find((p) => p.type === type).value;
  return get("year") + "-" + get("month") + "-" + get("day");
}

// "2026-11-22T14:30" typed in a datetime-local field means Yerevan time.
export function fromYerevanLocal(value) {
  return value ? value + ":00+04:00" : null;
}

export function toYerevanLocal(iso) {
  if (!iso) { return ""; }
  const shifted = new Date(new Date(iso).getTime() + 4 * 3600 * 1000);
  return shifted.toISOString().slice(0, 16);
}

// Amounts in drams, with the unit in words (the ֏ sign is missing from many fonts).
const DRAM = {hy: " դր.", ru: " драм", en: " AMD"};
export function amd(value, lang) {
  return new Intl.NumberFormat(lang).format(value || 0) + (DRAM[lang] || DRAM.en);
}
