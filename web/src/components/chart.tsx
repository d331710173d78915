// Per-day charts (uPlot: small, fast, canvas) with the same figures as a table for screen
// readers and keyboard users. Days are UTC dates, as the API counts them.
import 'uplot/dist/uPlot.min.css';
import uPlot from 'uplot';
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
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} class="chart-canvas" aria-hidden="true" />
      <details>
        <summary>{t('chart.table', { title })}</summary>
        <div class="table-wrap" tabIndex={0} role="region" aria-label={title}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('chart.day')}</th>
                {series.map((s) => (
                  <th scope="col" key={s.label}>
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {days.map((d, i) => (
                <tr key={d}>
                  <th scope="row">{d}</th>
                  {series.map((s) => (
                    <td key={s.label}>{formatNumber(locale, s.values[i] ?? 0, digits)}</td>
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
