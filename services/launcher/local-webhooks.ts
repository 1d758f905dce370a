/**
 * The webhook relaxations `npm start` hands its children: on a developer's machine receivers
 * are http://localhost, so both default to true there (an explicit value wins). Under
 * NODE_ENV=production none are set: the strict defaults hold, and the services' config refuses
 * the relaxations anyway.
 */
export function localWebhookEnv(nodeEnv: string, env: NodeJS.ProcessEnv): Record<string, string> {
  if (nodeEnv === 'production') return {}
  return {
    WEBHOOK_ALLOW_HTTP: env.WEBHOOK_ALLOW_HTTP || 'true',
    WEBHOOK_ALLOW_PRIVATE: env.WEBHOOK_ALLOW_PRIVATE || 'true',
  }
}
