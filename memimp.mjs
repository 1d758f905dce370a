const mods = process.argv.slice(2)
const mb = () => (process.memoryUsage().rss/1048576).toFixed(1)
console.log('start', mb())
for (const m of mods) { await import(m); globalThis.gc?.(); console.log(m, mb(), 'heap', (process.memoryUsage().heapUsed/1048576).toFixed(1)) }
