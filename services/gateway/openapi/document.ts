import { WEBHOOK_TIMEOUT_MS_DEFAULT } from '../../../shared/config.js'
import { DISABLE_AFTER, RETRY_SCHEDULE_S } from '../../../shared/webhooks/queue.js'
import { componentSchemas, ref } from './components.js'
import * as example from './examples.js'
import { operations } from './operations.js'
import { courierOperations } from './courier-operations.js'
import { headers, refusalResponses, withRefusalsOfKind } from './responses.js'

const WALK_THROUGH = `
Quote a local delivery, place 1 to 100 deliveries paid from a prepaid wallet, then follow,
cancel and hear about the orders. Amounts are in naira (major units); errors are always
\`{statusCode, timestamp, path, message}\` with \`errors\` and \`request_id\` where they apply.

## From a quote to a delivered order, in the sandbox

Every call takes \`Authorization: Bearer <key>\`. A \`ck_test_\` key works in the sandbox: a
test wallet, and a courier that moves test orders by itself.

1. \`GET /business/rate-cards\`: the vehicle types, weight bands and zones.
2. \`POST /business/order/cost\` with the pickup, the drop-off and the weight: a price and a
   \`quote_id\` that holds it until \`expires_at\`.
3. \`POST /business/order\` with an \`Idempotency-Key\` header and a list of shipments, each with
   the \`quote_id\` (and, if you like, a \`max_price\`): the orders and the \`placement_id\`.
   Retrying with the same key never charges twice.
4. \`GET /business/orders/{order_id}\`: the status and its history. Test orders move
   \`created → assigned → picked_up → delivered\` on their own (\`sandbox_scenario\` picks another
   path), or at once with \`POST /business/sandbox/orders/{order_id}/advance\`.
5. \`POST /business/webhook-endpoints\` with your HTTPS URL: every order change is POSTed to it,
   signed as the [Standard Webhooks](https://www.standardwebhooks.com/) specification says, so
   any of its libraries verifies it with the \`whsec_\` secret. \`GET /business/events?after=N\`
   gives the same events in order for polling.
6. \`POST /business/orders/{order_id}/cancel\`: free until a courier is assigned and for a short
   window after; the refund is a wallet transaction (\`GET /business/wallet/transactions\`).
`.trim()

const TAGS = [
  ['Catalog', 'What can be priced: vehicle types, weight bands, zones'],
  ['Quotes', 'Prices that hold until they expire'],
  ['Placements', 'Placing 1 to 100 shipments at once, all or nothing, idempotently'],
  ['Orders', 'Following and cancelling orders'],
  ['Wallet', 'The prepaid wallet and its statement'],
  ['Events', 'Every order change, in order, for polling'],
  ['Webhooks', 'Signed deliveries of every event to your endpoints'],
  ['Sandbox', 'Test keys, a test wallet and a courier that moves test orders'],
  ['Couriers', "The riders' side: shift, location, offers, and moving the orders they hold (courier tokens only)"],
] as const

// The sender's own numbers, so the promise to receivers moves with them.
const RETRY_HOURS = Math.round(RETRY_SCHEDULE_S.reduce((total, wait) => total + wait, 0) / 3600)

/** The signed POST this API makes to a webhook endpoint (OpenAPI 3.1 `webhooks`). */
const webhooks = {
  orderEvent: {
    post: {
      operationId: 'receiveOrderEvent', tags: ['Webhooks'],
      summary: 'An order changed (sent to your endpoint)',
      description: `Verify the signature before trusting the body; answer 2xx within ${WEBHOOK_TIMEOUT_MS_DEFAULT / 1000} seconds. Anything else is retried ${RETRY_SCHEDULE_S.length} times over about ${RETRY_HOURS} hours; 410 disables the endpoint at once, and so do ${DISABLE_AFTER.failedDeliveries} deliveries in a row that failed once the endpoint has been failing for ${DISABLE_AFTER.failingDays} days.`,
      security: [],
      parameters: [
        { name: 'webhook-id', in: 'header', required: true, description: 'The event id: the same on every attempt, to deduplicate by', schema: { type: 'string' } },
        { name: 'webhook-timestamp', in: 'header', required: true, description: 'Unix seconds of this attempt; refuse one too old', schema: { type: 'string' } },
        { name: 'webhook-signature', in: 'header', required: true, description: 'v1,<base64 HMAC-SHA256 of id.timestamp.body>, space separated while a rotated secret overlaps', schema: { type: 'string' } },
      ],
      requestBody: { required: true, description: 'The event', content: { 'application/json': { schema: ref('Event'), example: example.event } } },
      responses: { 200: { description: 'Received; any 2xx will do' } },
    },
  },
}

/** The OpenAPI 3.1 document of the public API, served at /openapi.json and rendered at /docs. */
export function openApiDocument(publicBaseUrl: string) {
  const security = [{ apiKey: [] }]
  return {
    openapi: '3.1.0',
    info: {
      title: 'Courier delivery ordering API',
      version: '2',
      description: WALK_THROUGH,
      // A name without an address: the linters ask for a contact, and Swagger UI shows no link for it.
      contact: { name: 'Courier delivery ordering API' },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: `${publicBaseUrl}/v2`, description: 'This deployment' }],
    tags: TAGS.map(([name, description]) => ({ name, description })),
    security,
    paths: withRefusalsOfKind({ ...operations, ...courierOperations }, security),
    webhooks,
    components: {
      securitySchemes: {
        courierToken: { type: 'http', scheme: 'bearer', description: 'A courier token, cc_live_…, from `courier:create` or `courier:token`. Only /courier routes take it.' },
        apiKey: {
          type: 'http', scheme: 'bearer',
          description: 'An API key: ck_live_… for real orders, ck_test_… for the sandbox. Reading orders, placements, the wallet and events takes orders:read or orders:write; webhook endpoints and redelivery take webhooks:write; the rest, the catalog and quotes included, orders:write. Each operation names its scopes.',
        },
      },
      schemas: componentSchemas(),
      responses: refusalResponses(),
      headers,
    },
  }
}
