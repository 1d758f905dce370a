// Docker HEALTHCHECK for the one image that runs six services. A container runs one of them,
// listening on its own port (GATEWAY_PORT, PRICING_PORT, WORKER_PORT, WEBHOOK_SENDER_PORT,
// CONSOLE_PORT or DISPATCHER_PORT; defaults as in shared/config.ts); the container is healthy
// when the service that listens answers /healthz with 200. A port nobody listens on refuses at
// once, so trying all costs nothing.
// Plain JavaScript on purpose: it runs from the image without the TypeScript build.
const ports = [
  process.env.GATEWAY_PORT || '3000',
  process.env.PRICING_PORT || '3001',
  process.env.WORKER_PORT || '3002',
  process.env.WEBHOOK_SENDER_PORT || '3003',
  process.env.CONSOLE_PORT || '3004',
  process.env.DISPATCHER_PORT || '3005',
]

async function alive(port) {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(3000) })
    return response.ok
  } catch {
    return false
  }
}

const results = await Promise.all(ports.map(alive))
process.exit(results.some(Boolean) ? 0 : 1)
