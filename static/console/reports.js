// The console's Reports view (issue 28 item 4, docs/reports.md): courier work for a range of
// Yerevan days from GET /reports/summary (totals, a row and two bars per courier) and the three
// reports as CSV or .xlsx downloads. The API's range is [from, to): the page shows the last day
// included, as people count, and sends the day after it.
import {ApiError, OfflineError} from "/static/js/api.js";
import {yerevanDate} from "/static/js/i18n.js";
import {barChart} from "/static/console/barchart.js";

const $ = (id) => document.getElementById(id);

// Calendar arithmetic on YYYY-MM-DD strings, at UTC midnight so no zone or summer time moves a day.
function addDays(day, days) {
  const date = new Date(day + "T00:00:00Z");
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

// Monday to Sunday of the Yerevan week containing now.
export function thisWeek(now) {
  const today = yerevanDate(now || new Date());
  const sinceMonday = (new Date(today + "T00:00:00Z").getUTCDay() + 6) % 7;
  const first = addDays(today, -sinceMonday);
  return {first: first, last: addDays(first, 6)};
}

function cell(text, value) {
  const td = document.createElement("td");
  td.textContent = text;
  if (value !== undefined) { td.dataset.value = value === null ? "" : String(value); }
  return td;
}

// From Content-Disposition's filename="…"; the server's names are plain ASCII (KIND-FROM-TO.EXT).
function filenameOf(response, fallback) {
  const match = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") || "");
  return match ? match[1] : fallback;
}

export class Reports {
  constructor(ctx) {
    this.ctx = ctx;
    this.summary = null;
    const week = thisWeek();
    $("r-from").value = week.first;
    $("r-to").value = week.last;
    $("reports-form").addEventListener("submit", (event) => { event.preventDefault(); this.load(); });
    document.querySelectorAll("#r-downloads [data-report]").forEach((b) => {
      b.addEventListener("click", () => this.download(b.dataset.report, b.dataset.format, b));
    });
  }

  // The query of the chosen days; null (with the reason shown) when the range is not whole.
  range() {
    const first = $("r-from").value, last = $("r-to").value;
    if (!first || !last) { $("r-error").textContent = this.ctx.T.repRangeMissing; return null; }
    return new URLSearchParams({from: first, to: addDays(last, 1)}).toString();
  }

  show() { return this.load(); }

  async load() {
    const query = this.range();
    if (!query) { return; }
    $("r-error").textContent = "";
    try {
      this.summary = await this.ctx.api.get("/reports/summary?" + query);
    } catch (error) {
      // A reversed or too long range is the API's 422; its Problem says why.
      this.summary = null;
      $("r-error").textContent = this.ctx.explain(error);
    }
    this.render();
  }

  render() {
    const T = this.ctx.T, lang = this.ctx.lang, summary = this.summary;
    const number = new Intl.NumberFormat(lang, {maximumFractionDigits: 1});
    const percent = (rate) => (rate === null || rate === undefined ? "—" : new Intl.NumberFormat(lang, {style: "percent", maximumFractionDigits: 1}).format(rate));
    const couriers = summary ? summary.couriers : [];
    $("r-summary").dataset.loaded = summary ? summary.from + "/" + summary.to : "";
    $("r-deliveries").textContent = summary ? number.format(summary.deliveries) : "";
    $("r-failures").textContent = summary ? number.format(summary.failures) : "";
    $("r-ontime").textContent = summary ? percent(summary.onTimeRate) : "";
    const rows = couriers.map((c) => {
      const reasons = Object.entries(c.failuresByReason).map(([reason, count]) => (T["reason_" + reason] || reason) + ": " + count).join(", ");
      const onTime = c.onTimeRate === null ? "—" : percent(c.onTimeRate) + " (" + c.onTime + "/" + c.deliveredWithWindow + ")";
      const minutes = c.averagePickupToDeliveryMinutes;
      const tr = document.createElement("tr");
      tr.dataset.courierId = c.courierId;
      tr.append(cell(c.courier), cell(number.format(c.deliveries), c.deliveries), cell(number.format(c.failures), c.failures),
                cell(reasons), cell(onTime, c.onTimeRate), cell(minutes === null ? "—" : number.format(minutes), minutes));
      return tr;
    });
    $("r-couriers").querySelector("tbody").replaceChildren(...rows);
    $("r-none").hidden = !summary || couriers.length > 0;
    $("r-chart").replaceChildren(couriers.length ? barChart(
      couriers.map((c) => ({label: c.courier, values: [c.deliveries, c.failures]})),
      [{name: T.repDeliveries, className: "bar-deliveries"}, {name: T.repFailures, className: "bar-failures"}],
      T.repChart) : "");
  }

  // A plain link cannot carry the bearer token, so the file is fetched and saved from a blob
  // under the server's name. One refresh and retry on 401, as the JSON client does.
  async download(kind, format, button) {
    const query = this.range();
    if (!query) { return; }
    const api = this.ctx.api;
    $("r-error").textContent = "";
    button.disabled = true;
    try {
      let response;
      for (let attempt = 0; ; attempt++) {
        try {
          response = await fetch("/reports/" + kind + "." + format + "?" + query,
                                 {headers: {"Authorization": await api.authorization()}, cache: "no-store"});
        } catch (e) { throw new OfflineError(e); }
        if (response.status === 401 && attempt === 0) { await api.refresh(); continue; }
        break;
      }
      if (!response.ok) { throw new ApiError(response.status, await response.json().catch(() => null)); }
      const blob = await response.blob();
      const url = URL.createObjectURL(blob);
      const link = document.createElement("a");
      link.href = url;
      link.download = filenameOf(response, kind + "." + format);
      document.body.append(link);
      link.click();
      link.remove();
      // Revoked once the browser has taken the file; at once could cancel the download.
      setTimeout(() => URL.revokeObjectURL(url), 60000);
    } catch (error) {
      $("r-error").textContent = this.ctx.explain(error);
    } finally { button.disabled = false; }
  }
}
