import { COURIER_VEHICLE_TYPES } from '../../../shared/courier.js'
import { createCourier } from '../../../shared/couriers/accounts.js'
import { issueLoginCode } from '../../../shared/couriers/login.js'
import { defineCommand } from '../command.js'
import { phoneFlag, optionalNumber, optionalText, requiredChoice, requiredText } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/**
 * `courier:create`: a courier, their Bearer token for `/v2/courier/*` and a one-time login code
 * for the courier web app, both shown once (DESIGN 14). The phone is stored in its E.164 form, and
 * one enabled courier has it at most.
 */
export const courierCreate = defineCommand({
  options: {
    name: { type: 'string' },
    phone: { type: 'string' },
    'vehicle-type': { type: 'string' },
    'vehicle-plate': { type: 'string' },
    'max-weight-kg': { type: 'string' },
  },
  prepare(flags) {
    return {
      name: requiredText(flags, 'name'),
      phone: phoneFlag(flags),
      vehicleType: requiredChoice(flags, 'vehicle-type', COURIER_VEHICLE_TYPES),
      vehiclePlate: optionalText(flags, 'vehicle-plate', 32),
      maxWeightKg: optionalNumber(flags, 'max-weight-kg', 0.1, 100_000),
    }
  },
  async run({ sql, actor, config }, input) {
    const created = await createCourier(sql, actor, input)
    if (created.kind === 'invalid') throw new OperatorInputError(created.message)
    const { courier, token } = created
    const { code, expiresAt } = await issueLoginCode(sql, courier.id, config.COURIER_CODE_TTL_MIN)
    return {
      courier_id: courier.id, courier_token: token, vehicle_type: courier.vehicleType, max_weight_kg: courier.maxWeightKg,
      login_code: code, login_code_expires_at: expiresAt.toISOString(), courier_app: `${config.CONSOLE_PUBLIC_URL}/courier`,
    }
  },
})
