// Preloaded into a child server by tests (node -r): records each time the event loop was held
// for more than 50 ms, as wall time and as the CPU time the process spent meanwhile. The CPU
// time is the work that held the loop; the wall time also counts the time a loaded machine gave
// the process no CPU at all. On SIGUSR2 the blocks so far go to stderr as one line, and are
// forgotten.
'use strict';
const TICK_MS = 10;
let blocks = [];
let lastWall = performance.now();
let lastCpu = process.cpuUsage();
setInterval(() => {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  const heldMs = wall - lastWall - TICK_MS;
  if (heldMs > 50) blocks.push({ wallMs: Math.round(heldMs), cpuMs: Math.round((cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000) });
  lastWall = wall;
  lastCpu = cpu;
}, TICK_MS).unref();
process.on('SIGUSR2', () => {
  process.stderr.write(`loop-blocks ${JSON.stringify(blocks)}\n`);
  blocks = [];
});
