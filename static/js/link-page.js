// What the pages behind emailed links share: the language (Armenian first; ?lang=, this device's
// earlier choice, the browser's; the buttons switch it and the signed-in user's own language wins
// once known), and a view redrawn from the current state whenever the language changes.
import {LANGUAGES, applyTexts, initialLanguage, rememberLanguage} from "/static/js/i18n.js";
import {TEXTS, fill} from "/static/js/link-texts.js";

export function linkPage(draw) {
  const page = {
    lang: initialLanguage(),
    get T() { return TEXTS[this.lang]; },
    text(key, values) { return fill(this.T[key], values || {}); },
    redraw() { applyTexts(document, this.T, this.lang); draw(this); },
    use(lang) {
      if (!LANGUAGES.includes(lang) || lang === this.lang) { return; }
      this.lang = lang;
      rememberLanguage(lang);
      this.redraw();
    },
  };
  document.querySelectorAll("[data-lang]").forEach((button) => button.addEventListener("click", () => page.use(button.dataset.lang)));
  return page;
}

export async function postJson(path, body, headers) {
  const response = await fetch(path, {method: "POST", cache: "no-store",
                                      headers: Object.assign({"Content-Type": "application/json"}, headers || {}),
                                      body: JSON.stringify(body)});
  return {response: response, body: await response.json().catch(() => ({}))};
}

// The pages hand a session to the console or the courier app through this tab's sessionStorage
// (which picks it up and keeps only the refresh token), then go on to the screen of the role.
export function handOver(session) {
  sessionStorage.setItem("appliance.session", JSON.stringify(session));
  document.body.dataset.signedIn = "true";
  setTimeout(() => { location.replace(session.role === "courier" ? "/app/" : "/console/"); }, 600);
}
