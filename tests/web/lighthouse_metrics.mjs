// Lighthouse 12.2.3's *observed* metrics for one saved trace + DevTools log, as JSON on stdout.
// Used by tests/test_web_vitals_lighthouse.py to check nodes/perf/metrics/web.py against the
// reference. Offline: it only reads the two files (gzip or plain) and runs Lighthouse's computed
// artifacts (core/computed/metrics/*.js) with throttlingMethod "provided" (= observed values).
// Usage: node lighthouse_metrics.mjs TRACE DEVTOOLSLOG
import fs from 'node:fs';
import zlib from 'node:zlib';
import {FirstContentfulPaint} from 'lighthouse/core/computed/metrics/first-contentful-paint.js';
import {LargestContentfulPaint} from 'lighthouse/core/computed/metrics/largest-contentful-paint.js';
import {CumulativeLayoutShift} from 'lighthouse/core/computed/metrics/cumulative-layout-shift.js';
import {TotalBlockingTime} from 'lighthouse/core/computed/metrics/total-blocking-time.js';
import {Interactive} from 'lighthouse/core/computed/metrics/interactive.js';
import {ProcessedTrace} from 'lighthouse/core/computed/processed-trace.js';

function load(path) {
  let raw = fs.readFileSync(path);
  if (raw[0] === 0x1f && raw[1] === 0x8b) raw = zlib.gunzipSync(raw);
  return JSON.parse(raw.toString('utf8'));
}

const [tracePath, logPath] = process.argv.slice(2);
const trace = load(tracePath);
const devtoolsLog = load(logPath);
const context = {computedCache: new Map(), settings: {}};
const settings = {throttlingMethod: 'provided', throttling: {}, formFactor: 'desktop'};
const data = {
  trace, devtoolsLog, settings,
  gatherContext: {gatherMode: 'navigation'},
  URL: {},
  simulator: null,
};
const pick = async (fn) => {
  try { return await fn(); } catch (err) { return {error: String(err && err.message || err)}; }
};
const processed = await ProcessedTrace.request(trace, context);
const out = {
  lighthouse: '12.2.3',
  main_frame: processed.mainFrameInfo.frameId,
  main_pid: processed.mainFrameInfo.startingPid,
  time_origin_us: processed.timestamps.timeOrigin,
  fcp_ms: await pick(async () => (await FirstContentfulPaint.request(data, context)).timing),
  lcp_ms: await pick(async () => (await LargestContentfulPaint.request(data, context)).timing),
  cls: await pick(async () => (await CumulativeLayoutShift.request(trace, context)).cumulativeLayoutShift),
  cls_main_frame: await pick(async () => (await CumulativeLayoutShift.request(trace, context)).cumulativeLayoutShiftMainFrame),
  tti_ms: await pick(async () => (await Interactive.request(data, context)).timing),
  tbt_ms: await pick(async () => (await TotalBlockingTime.request(data, context)).timing),
};
process.stdout.write(JSON.stringify(out) + '\n');
