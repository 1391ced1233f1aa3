/**
 * The console's charts: stacked bars per UTC day drawn as inline SVG with DOM calls only (no
 * markup from data, no library). Each bar segment carries `data-day`, `data-series` and
 * `data-value` and a <title> tooltip, so a reader (or a test) can see the figure behind it.
 * Browser JavaScript, inlined into the status page (status-page.ts).
 */
export const CHART_SCRIPT = `
const SVG_NS = "http://www.w3.org/2000/svg";
function svgEl(name, attributes) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attributes)) el.setAttribute(k, String(v));
  return el;
}
/** The UTC days from "YYYY-MM-DD" to "YYYY-MM-DD", both included. */
function daysBetween(from, to) {
  const days = [];
  for (let t = Date.parse(from + "T00:00:00Z"); t <= Date.parse(to + "T00:00:00Z"); t += 86400000) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}
/**
 * Draw stacked bars into the <svg> with this id. values: { day: { series: number } }; series:
 * [{ name, label, color }]; format: a number's text.
 */
function barChart(id, days, values, series, format) {
  const svg = document.getElementById(id);
  const width = 680, height = 190, left = 64, bottom = 24, top = 12;
  svg.setAttribute("viewBox", "0 0 " + width + " " + height);
  svg.replaceChildren();
  const total = (day) => series.reduce((a, s) => a + ((values[day] || {})[s.name] || 0), 0);
  const max = Math.max(0, ...days.map(total));
  const plot = height - bottom - top;
  const step = (width - left) / days.length;
  svg.appendChild(svgEl("line", { x1: left, y1: top + plot, x2: width, y2: top + plot, stroke: "#9aa3b2" }));
  for (const [fraction, label] of [[0, format(0)], [1, format(max)]]) {
    const y = top + plot - fraction * plot;
    const text = svgEl("text", { x: left - 6, y: y + 4, "text-anchor": "end", "font-size": 11, fill: "#6b7280" });
    text.textContent = label;
    svg.appendChild(text);
    if (fraction > 0) svg.appendChild(svgEl("line", { x1: left, y1: y, x2: width, y2: y, stroke: "#e3e6eb" }));
  }
  days.forEach((day, i) => {
    const x = left + i * step + step * 0.15;
    let y = top + plot;
    for (const s of series) {
      const value = (values[day] || {})[s.name] || 0;
      const h = max > 0 ? (value / max) * plot : 0;
      y -= h;
      const rect = svgEl("rect", {
        x: x.toFixed(1), y: y.toFixed(1), width: (step * 0.7).toFixed(1), height: h.toFixed(1), fill: s.color,
        "data-day": day, "data-series": s.name, "data-value": value,
      });
      const title = svgEl("title", {});
      title.textContent = day + " " + s.label + ": " + format(value);
      rect.appendChild(title);
      svg.appendChild(rect);
    }
    if ((days.length - 1 - i) % 2 === 0 || days.length <= 7) {
      const label = svgEl("text", { x: x + step * 0.35, y: height - 8, "text-anchor": "middle", "font-size": 11, fill: "#6b7280" });
      label.textContent = day.slice(5);
      svg.appendChild(label);
    }
  });
}
/** The legend beside a chart: a swatch and a label per series. */
function legend(id, series) {
  const box = document.getElementById(id);
  box.replaceChildren();
  for (const s of series) {
    const item = document.createElement("span");
    const swatch = document.createElement("i");
    swatch.style.background = s.color;
    item.append(swatch, s.label);
    box.appendChild(item);
  }
}
`;
