/** The tables list.ts prints. */
import { LINKS_GOAL, type Scenario } from './list-scenarios';

export interface Measured {
  rps: number;
  p50: number;
  p99: number;
  failed: number;
  cpuPerRequestUs: number;
  /** CPU of the database's processes (its backends and PostgreSQL's own writers) per request. */
  databaseCpuPerRequestUs: number;
  machineBusy: number;
  /** Share of the machine used by processes outside the bench meanwhile. */
  foreign: number;
  /** The server's resident memory after the measured window. */
  rssMiB: number;
}

export type Row = { s: Scenario; ours: Measured; floor: Measured; extra: number };

/** "(ours: 2 more SQL statements)", "(ours: 1 fewer SQL statement)", or nothing. */
function statements(extra: number): string {
  if (extra === 0) return '';
  const n = Math.abs(extra);
  return ` (ours: ${n} ${extra > 0 ? 'more' : 'fewer'} SQL statement${n > 1 ? 's' : ''})`;
}

export function table(rows: Row[], facts: string[]): string {
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  const lines = [
    '| scenario | ours req/s | floor req/s | ratio | goal | met |',
    '|---|---:|---:|---:|---:|:---:|',
    ...rows.map(({ s, ours, floor, extra }) => {
      const ratio = ours.rps / floor.rps;
      const fail = ours.failed || floor.failed ? ` (failed: ours ${ours.failed}, floor ${floor.failed})` : '';
      const goal = s.goal === undefined ? '| — | — |' : `| ≥ ${s.goal}× | ${ratio >= s.goal ? 'yes' : 'no'} |`;
      // A request that writes many records: the figures are records/s.
      const per = s.perRequest ?? 1;
      const unit = per > 1 ? ' (records/s)' : '';
      return `| ${s.title}${unit}${statements(extra)}${fail} | ${n(ours.rps * per)} | ${n(floor.rps * per)} | ${ratio.toFixed(2)}× ${goal}`;
    }),
    '',
    '| scenario | p50 / p99 ms, ours | p50 / p99 ms, floor | server CPU per request, ours | floor | database CPU per request, ours / floor | server resident MiB, ours / floor | machine busy, ours / floor | other work, ours / floor |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(({ s, ours, floor }) => {
      const us = (v: number) => `${n(v)} µs`;
      const pct = (v: number) => `${Math.round(v * 100)} %`;
      return `| ${s.title} | ${ours.p50} / ${ours.p99} | ${floor.p50} / ${floor.p99} | ${us(ours.cpuPerRequestUs)} | ${us(floor.cpuPerRequestUs)} | ${n(ours.databaseCpuPerRequestUs)} / ${us(floor.databaseCpuPerRequestUs)} | ${n(ours.rssMiB)} / ${n(floor.rssMiB)} | ${pct(ours.machineBusy)} / ${pct(floor.machineBusy)} | ${pct(ours.foreign)} / ${pct(floor.foreign)} |`;
    }),
    '',
    ...facts.map((f) => `- ${f}`),
    '- "database CPU": PostgreSQL\'s backends of the bench database and its own writers (WAL, checkpoints), in ticks of 10 ms; a backend that ended during the window is not counted',
    '- "other work": CPU share of the machine used meanwhile by processes outside this bench (0 % on a quiet machine)',
  ];
  return lines.join('\n');
}

/**
 * The page with brand and categories names against the plain page, on each server: how many
 * times the plain page's time it takes (plain req/s ÷ links req/s), and the same for server CPU.
 */
export function linksTable(rows: Row[]): string[] {
  const plain = rows.find((r) => r.s.key === 'plain');
  const links = rows.find((r) => r.s.key === 'links');
  if (!plain || !links) return [];
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  const line = (label: string, p: Measured, l: Measured, goal: boolean) => {
    const times = p.rps / l.rps;
    const met = goal ? `≤ ${LINKS_GOAL}× | ${times <= LINKS_GOAL ? 'yes' : 'no'}` : '— | —';
    return `| ${label} | ${n(p.rps)} | ${n(l.rps)} | ${times.toFixed(2)}× | ${(l.cpuPerRequestUs / p.cpuPerRequestUs).toFixed(2)}× | ${met} |`;
  };
  return [
    '| server | plain list req/s | with brand and categories names req/s | time, links ÷ plain | server CPU, links ÷ plain | goal | met |',
    '|---|---:|---:|---:|---:|---:|:---:|',
    line('ours', plain.ours, links.ours, true),
    line('floor', plain.floor, links.floor, false),
    '',
  ];
}
