import t from 'tap'
import { replicaName, replicaPort, replicasFromArgs, ReplicasError } from '../../../services/launcher/replicas.js'

t.test('--replicas names a count per service; the others run once', async (t) => {
  t.same(replicasFromArgs([]), { pricing: 1, worker: 1, 'webhook-sender': 1, console: 1, dispatcher: 1, gateway: 1 })
  t.same(replicasFromArgs(['--replicas', 'gateway=2,worker=3,dispatcher=2,webhook-sender=2']), { pricing: 1, worker: 3, 'webhook-sender': 2, console: 1, dispatcher: 2, gateway: 2 })
  t.same(replicasFromArgs(['--replicas=gateway=2']).gateway, 2, 'the = form too')
})

t.test('a wrong --replicas says what is wrong', async (t) => {
  t.throws(() => replicasFromArgs(['--replicas', 'gatway=2']), new ReplicasError('--replicas: unknown service gatway (one of pricing, worker, webhook-sender, console, dispatcher, gateway)'))
  t.throws(() => replicasFromArgs(['--replicas', 'gateway=0']), new ReplicasError('--replicas: gateway needs a count from 1 to 9, not 0'))
  t.throws(() => replicasFromArgs(['--replicas', 'gateway=10']), new ReplicasError('--replicas: gateway needs a count from 1 to 9, not 10'))
  t.throws(() => replicasFromArgs(['--replicas']), new ReplicasError('--replicas needs service=count,… (for example gateway=2,worker=3)'))
  t.throws(() => replicasFromArgs(['--replica']), new ReplicasError('unknown argument --replica (the launcher takes --replicas service=count,…)'))
})

t.test('replica n listens on the service\'s ports plus 10·(n−1) and goes by service#n', async (t) => {
  t.same([1, 2, 3].map((n) => replicaPort(3000, n)), [3000, 3010, 3020])
  t.same([1, 2].map((n) => replicaPort(9466, n)), [9466, 9476])
  t.equal(replicaPort(0, 3), 0, 'port 0 (any free one) stays 0')
  t.throws(() => replicaPort(65530, 2), ReplicasError)
  t.same([replicaName('gateway', 1), replicaName('gateway', 2)], ['gateway', 'gateway#2'])
})
