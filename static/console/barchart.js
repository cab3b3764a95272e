// Grouped bars as plain SVG (no library, nothing inline for the Content-Security-Policy to refuse:
// colours come from console.css classes). groups: [{label, values: [n, …]}]; series: [{name,
// className}] in the order of the values. Scaled to the largest value; each bar has a <title>.
const SVG = "http://www.w3.org/2000/svg";

function node(tag, attributes, text) {
  const element = document.createElementNS(SVG, tag);
  Object.entries(attributes).forEach(([key, value]) => element.setAttribute(key, String(value)));
  if (text !== undefined) { element.textContent = text; }
  return element;
}

export function barChart(groups, series, title) {
  const bar = 18, gap = 4, groupGap = 46, left = 8, top = 40, axis = 40, height = 180, legend = 130;
  // Wide enough for the bars and for the legend above them.
  const width = Math.max(left * 2 + groups.length * (series.length * (bar + gap) + groupGap), left + series.length * legend);
  const largest = Math.max(1, ...groups.flatMap((g) => g.values));
  const svg = node("svg", {viewBox: `0 0 ${width} ${top + height + axis}`, width: width, height: top + height + axis,
                           role: "img", "aria-label": title, class: "bar-chart"});
  // The legend, one swatch per series.
  series.forEach((s, i) => {
    svg.append(node("rect", {x: left + i * legend, y: 6, width: 12, height: 12, class: s.className}));
    svg.append(node("text", {x: left + i * legend + 16, y: 17, class: "legend"}, s.name));
  });
  svg.append(node("line", {x1: 0, x2: width, y1: top + height, y2: top + height, class: "axis"}));
  groups.forEach((group, g) => {
    const x0 = left + g * (series.length * (bar + gap) + groupGap);
    group.values.forEach((value, i) => {
      const h = Math.round((value / largest) * height);
      const x = x0 + i * (bar + gap);
      const rect = node("rect", {x: x, y: top + height - h, width: bar, height: h, class: series[i].className});
      rect.dataset.value = value;
      rect.append(node("title", {}, group.label + " · " + series[i].name + ": " + value));
      svg.append(rect);
      svg.append(node("text", {x: x + bar / 2, y: top + height - h - 3, class: "value"}, String(value)));
    });
    const middle = x0 + (series.length * (bar + gap) - gap) / 2;
    // Names are cut to fit under their bars; the full name is in each bar's title and the table.
    const short = group.label.length > 12 ? group.label.slice(0, 11) + "…" : group.label;
    svg.append(node("text", {x: middle, y: top + height + 16, class: "label"}, short));
  });
  return svg;
}
