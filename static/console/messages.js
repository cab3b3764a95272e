// The company's messages to recipients (docs/recipient-messages.md): the SMPP provider (the
// password is write-only: left empty it stays as it is), e-mail, the recipients' default
// language, the events that send and the texts per event and language (empty: the built-in text,
// shown as the placeholder), each with its SMS cost as it is typed.
const $ = (id) => document.getElementById(id);
const EVENTS = ["assigned", "picked_up", "arriving", "delivered", "failed", "late"];
const LANGUAGES = ["hy", "ru", "en"];
// GSM 03.38 (and its extension table): any other character makes the SMS UCS-2.
const GSM = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà^{}\\[~]|€";

// What the sender will count (smpplib's split): GSM 160 / 153 per part, UCS-2 70 / 67.
export function smsCost(text) {
  const gsm = [...text].every((c) => GSM.includes(c));
  const length = gsm ? [...text].reduce((n, c) => n + ("^{}\\[~]|€".includes(c) ? 2 : 1), 0) : text.length;
  const [single, part] = gsm ? [160, 153] : [70, 67];
  return {encoding: gsm ? "gsm7" : "ucs2", segments: length <= single ? 1 : Math.ceil(length / part)};
}

export class MessageSettings {
  constructor(ctx) {
    this.ctx = ctx;
    $("messages-form").addEventListener("submit", (event) => { event.preventDefault(); this.save(); });
  }

  async load() {
    const T = this.ctx.T;
    const {settings} = await this.ctx.api.get("/company/messages");
    this.settings = settings;
    $("m-sms").checked = settings.smsEnabled; $("m-host").value = settings.smppHost || "";
    $("m-port").value = settings.smppPort || 2775; $("m-system").value = settings.smppSystemId || "";
    $("m-password").value = ""; $("m-password").placeholder = settings.hasSmppPassword ? T.passwordKept : "";
    $("m-source").value = settings.smppSourceAddr || ""; $("m-tls").checked = settings.smppTls;
    $("m-rate").value = settings.smppPerSecond; $("m-email").checked = settings.emailEnabled;
    $("m-language").value = settings.defaultLanguage; $("m-arriving").value = settings.arrivingMinutes;
    const legend = $("m-events").querySelector("legend");
    $("m-events").replaceChildren(legend, ...EVENTS.map((event) => {
      const label = document.createElement("label");
      label.className = "check";
      const box = document.createElement("input");
      box.type = "checkbox"; box.value = event; box.checked = settings.events.includes(event);
      box.dataset.event = event;
      label.append(box, " " + (T["msgEvent_" + event] || event));
      return label;
    }));
    $("m-templates").replaceChildren(...EVENTS.map((event) => {
      const details = document.createElement("details");
      const summary = document.createElement("summary");
      summary.textContent = T["msgEvent_" + event] || event;
      details.append(summary, ...LANGUAGES.map((language) => this.templateField(settings, event, language)));
      return details;
    }));
  }

  // One text: its label, the textarea (the built-in text as placeholder) and its SMS cost.
  templateField(settings, event, language) {
    const T = this.ctx.T;
    const box = document.createElement("div");
    const id = "m-t-" + event + "-" + language;
    const label = document.createElement("label");
    label.htmlFor = id; label.textContent = language;
    const area = document.createElement("textarea");
    area.id = id; area.rows = 2; area.maxLength = 480;
    area.dataset.event = event; area.dataset.language = language;
    area.value = (settings.templates[event] || {})[language] || "";
    area.placeholder = settings.defaultTexts[event][language];
    const cost = document.createElement("span");
    cost.className = "muted small";
    const show = () => {
      // Every placeholder filled in as a real message fills it (issue 46; the server counts the
      // saved texts the same way, settings.segments): the company's name, a ten-character order
      // number, a link with a 32-character token and ?lang=, two-digit minutes.
      const company = (this.ctx.session && this.ctx.session.company && this.ctx.session.company.name) || "";
      const shown = smsCost((area.value || area.placeholder).split("{company}").join(company)
        .split("{order}").join("A".repeat(10)).split("{minutes}").join("15")
        .split("{link}").join(location.origin + "/t/" + "x".repeat(32) + "?lang=" + language));
      cost.textContent = shown.segments + " " + (shown.segments === 1 ? T.segment : T.segments) + " · " + shown.encoding.toUpperCase();
    };
    area.addEventListener("input", show);
    show();
    box.append(label, area, cost);
    return box;
  }

  async save() {
    const events = [...$("m-events").querySelectorAll("input:checked")].map((box) => box.value);
    const templates = {};
    $("m-templates").querySelectorAll("textarea").forEach((area) => {
      const text = area.value.trim();
      if (!text) { return; }
      (templates[area.dataset.event] = templates[area.dataset.event] || {})[area.dataset.language] = text;
    });
    const body = {
      smsEnabled: $("m-sms").checked, emailEnabled: $("m-email").checked, smppTls: $("m-tls").checked,
      defaultLanguage: $("m-language").value, events, templates,
      smppPerSecond: parseInt($("m-rate").value || "10", 10), arrivingMinutes: parseInt($("m-arriving").value || "10", 10),
    };
    const text = {smppHost: "m-host", smppSystemId: "m-system", smppSourceAddr: "m-source", smppPassword: "m-password"};
    Object.entries(text).forEach(([field, id]) => { const value = $(id).value.trim(); if (value) { body[field] = value; } });
    if ($("m-port").value) { body.smppPort = parseInt($("m-port").value, 10); }
    try {
      await this.ctx.api.patch("/company/messages", body);
      $("messages-error").textContent = "";
      this.ctx.toast(this.ctx.T.saved);
      await this.load();
    } catch (error) { $("messages-error").textContent = this.ctx.explain(error); }
  }
}
