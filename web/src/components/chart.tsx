// Per-day charts and per-category bars (uPlot: small, fast, canvas) with the same figures as a
// table for screen readers and keyboard users. Days are UTC dates, as the API counts them.
import 'uplot/dist/uPlot.min.css';
import uPlot from 'uplot';
import type { RefObject } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { formatNumber, useI18n } from '../i18n';

export interface Series {
  label: string;
  values: number[];
  color: string;
}

export function DayChart({ title, days, series, digits }: { title: string; days: string[]; series: Series[]; digits?: number }) {
  const { locale, t } = useI18n();
  const box = useRef<HTMLDivElement>(null);
  const key = JSON.stringify([days, series]);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const bars = uPlot.paths.bars!({ size: [0.7 / Math.max(series.length, 1), 40], align: 0 });
    const opts: uPlot.Options = {
      width: Math.max(el.clientWidth, 200),
      height: 200,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      legend: { show: series.length > 1 },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [{ space: 50 }, { size: 50 }],
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, fill: `${s.color}cc`, width: 1, paths: bars, points: { show: false } }))],
    };
    const plot = new uPlot(opts, [xs, ...series.map((s) => s.values)], el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 200), height: 200 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [key, locale]);
  return (
    <ChartFigure
      title={title}
      box={box}
      head={[t('chart.day'), ...series.map((s) => s.label)]}
      rows={days.map((d, i) => [d, ...series.map((s) => formatNumber(locale, s.values[i] ?? 0, digits))])}
    />
  );
}

/** The chart's canvas (hidden from assistive technology) and its figures as a table. */
function ChartFigure({ title, box, head, rows }: { title: string; box: RefObject<HTMLDivElement | null>; head: string[]; rows: string[][] }) {
  const { t } = useI18n();
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} class="chart-canvas" aria-hidden="true" />
      <details>
        <summary>{t('chart.table', { title })}</summary>
        <div class="table-wrap" tabIndex={0} role="region" aria-label={title}>
          <table>
            <thead>
              <tr>
                {head.map((h) => (
                  <th scope="col" key={h}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map(([first, ...cells], i) => (
                <tr key={i}>
                  <th scope="row">{first}</th>
                  {cells.map((c, j) => (
                    <td key={j}>{c}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

export interface Bar {
  label: string;
  value: number;
  color: string;
}

/**
 * One bar per category (e.g. the cards holding each tier), each in its own colour, with the
 * same figures as a table. Same uPlot as the day charts, on an ordinal x axis.
 */
export function BarChart({ title, bars, categoryLabel, valueLabel }: { title: string; bars: Bar[]; categoryLabel: string; valueLabel: string }) {
  const { locale } = useI18n();
  const box = useRef<HTMLDivElement>(null);
  const key = JSON.stringify(bars);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = bars.map((_b, i) => i);
    const colors = bars.map((b) => b.color);
    const paths = uPlot.paths.bars!({
      size: [0.6, 80],
      align: 0,
      disp: { fill: { unit: 3, values: () => colors }, stroke: { unit: 3, values: () => colors.map(() => '#374151') } },
    });
    const opts: uPlot.Options = {
      width: Math.max(el.clientWidth, 200),
      height: 200,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: false, range: [-0.5, Math.max(bars.length - 0.5, 0.5)] }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [
        { space: 10, splits: () => xs, values: (_u, splits) => splits.map((i) => bars[i]?.label ?? ''), grid: { show: false } },
        { size: 50 },
      ],
      series: [{}, { label: valueLabel, width: 1, paths, points: { show: false } }],
    };
    const plot = new uPlot(opts, [xs, bars.map((b) => b.value)], el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 200), height: 200 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [key, locale]);
  return <ChartFigure title={title} box={box} head={[categoryLabel, valueLabel]} rows={bars.map((b) => [b.label, formatNumber(locale, b.value)])} />;
}

/** Every UTC day from `from` to `to` inclusive, as YYYY-MM-DD. */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = Date.parse(`${from}T00:00:00Z`); d <= Date.parse(`${to}T00:00:00Z`) && out.length < 400; d += 86_400_000) {
    out.push(new Date(d).toISOString().slice(0, 10));
  }
  return out;
}

export const todayUtc = () => new Date().toISOString().slice(0, 10);
export const daysAgoUtc = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
