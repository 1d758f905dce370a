import type { Command } from '../command.js'

// The contract of docs/contracts.md. Loaded on demand: a command pulls in only the modules
// it needs, which keeps each invocation quick.
export const commands: Record<string, () => Promise<Command>> = {
  'business:create': async () => (await import('./business-create.js')).businessCreate,
  'key:create': async () => (await import('./key-create.js')).keyCreate,
  'key:revoke': async () => (await import('./key-revoke.js')).keyRevoke,
  'wallet:credit': async () => (await import('./wallet-credit.js')).walletCredit,
  'wallet:show': async () => (await import('./wallet-show.js')).walletShow,
  'ratecard:import': async () => (await import('./ratecard-import.js')).ratecardImport,
  'ratecard:enable': async () => (await import('./ratecard-enable.js')).ratecardEnable,
  'ratecard:disable': async () => (await import('./ratecard-disable.js')).ratecardDisable,
  'platform-rates:set': async () => (await import('./platform-rates-set.js')).platformRatesSet,
  'order:advance': async () => (await import('./order-advance.js')).orderAdvance,
  'order:cancel': async () => (await import('./order-cancel.js')).orderCancel,
  'courier:create': async () => (await import('./courier-create.js')).courierCreate,
  'courier:token': async () => (await import('./courier-token.js')).courierToken,
  'courier:code': async () => (await import('./courier-code.js')).courierCode,
  'courier:disable': async () => (await import('./courier-disable.js')).courierDisable,
  'courier:phone': async () => (await import('./courier-phone.js')).courierPhoneCommand,
  'user:create': async () => (await import('./user-create.js')).userCreate,
  'user:link': async () => (await import('./user-link.js')).userLink,
  'user:disable': async () => (await import('./user-disable.js')).userDisable,
  'demo:seed': async () => (await import('./demo-seed.js')).demoSeedCommand,
  'webhooks:reencrypt': async () => (await import('./webhooks-reencrypt.js')).webhooksReencrypt,
  erase: async () => (await import('./erase.js')).erase,
}
