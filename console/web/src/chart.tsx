// A uPlot chart that follows its container's width and takes new data without being rebuilt.
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { when } from "./i18n";

export interface Series {
  label: string;
  color: string;
  /** points draws dots only (no line), for scatter-like series. */
  points?: boolean;
}

export interface ChartProps {
  title: string;
  series: Series[];
  /** data[0] are x values in seconds; data[i] the values of series i-1 (null = gap). */
  data: (number | null)[][];
  height?: number;
  yUnit?: string;
  yMax?: number;
}

export function Chart(props: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const latest = useRef(props);
  latest.current = props;

  useEffect(() => {
    const el = box.current!;
    const make = () => {
      plot.current?.destroy();
      const p = latest.current;
      const unit = p.yUnit ?? "";
      const opts: uPlot.Options = {
        title: p.title,
        width: Math.max(200, el.clientWidth),
        height: p.height ?? 180,
        cursor: { drag: { x: false, y: false } },
        // A short series would be stretched over the width (or, with one point, over years):
        // the axis spans at least a minute from the first point, so a live series grows
        // from the left.
        scales: {
          x: {
            time: true,
            range: (u, min, max) =>
              min == null ? [Date.now() / 1000 - 60, Date.now() / 1000] : u.data[0].length < 2 || max - min < 60 ? [min, min + 60] : [min, max],
          },
          y: p.yMax ? { range: [0, p.yMax] } : { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
        },
        axes: [
          // Times as on every other page (i18n's when): 24-hour clock, the date as YYYY-MM-DD on
          // the first tick, never uPlot's default en-US month/day.
          { stroke: "#5b6573", grid: { stroke: "#e3e7ed" }, values: (_u, splits) => splits.map((s, i) => tick(s, i === 0)) },
          {
            stroke: "#5b6573",
            grid: { stroke: "#e3e7ed" },
            size: 60,
            values: (_u, vals) => vals.map((v) => `${+v.toFixed(2)}${unit}`),
          },
        ],
        series: [
          { value: (_u: uPlot, v: number | null) => (v == null ? "–" : when(v * 1000)) },
          ...p.series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: s.points ? 0 : 2,
            paths: s.points ? () => null : undefined,
            points: s.points ? { show: true, size: 7, fill: s.color, stroke: s.color } : { show: false },
            value: (_u: uPlot, v: number | null) => (v == null ? "–" : `${+v.toFixed(2)}${unit}`),
          })),
        ],
      };
      plot.current = new uPlot(opts, p.data as uPlot.AlignedData, el);
    };
    make();
    let w = el.clientWidth;
    const ro = new ResizeObserver(() => {
      if (Math.abs(el.clientWidth - w) > 4) {
        w = el.clientWidth;
        plot.current?.setSize({ width: Math.max(200, w), height: latest.current.height ?? 180 });
      }
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
    // The series list is fixed for a chart's life; labels follow the language on remount.
  }, [props.series.map((s) => s.label).join("|")]);

  useEffect(() => {
    plot.current?.setData(props.data as uPlot.AlignedData);
  }, [props.data]);

  return <div class="chart" ref={box} role="img" aria-label={props.title} />;
}

/** tick labels an x-axis split (seconds): HH:mm:ss, with YYYY-MM-DD above it on the first. */
function tick(sec: number, first: boolean): string {
  const d = new Date(sec * 1000);
  const two = (n: number) => String(n).padStart(2, "0");
  const time = `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  return first ? `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}\n${time}` : time;
}
