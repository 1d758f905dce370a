import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import ts from 'typescript'
import openapiTS, { astToString } from 'openapi-typescript'
import { seedAccount } from '../../helpers/accounts.js'
import { projectRoot } from '../../helpers/processes.js'
import { startStack } from '../../helpers/stack.js'

// What the test reads of the compiled docs/client/flow.ts (kept out of this project's own typecheck).
interface CompiledFlow {
  quoteAndPlace(baseUrl: string, apiKey: string): Promise<{ quotedPrice: number; charged: number; order: { status: string; price: number } }>
}

// What an integrator does with the document: generate types with openapi-typescript, write the
// flow in docs/client/flow.ts against them with openapi-fetch, compile it under --strict, run it.
t.test('a client generated from the served document compiles under --strict and places an order', async (t) => {
  const { gateway, db } = await startStack(t)
  const { apiKey } = await seedAccount(db.sql, { balance: 50_000 })
  const address = await gateway.listen({ port: 0, host: '127.0.0.1' })
  const document = await (await fetch(`${address}/openapi.json`)).text()

  // Inside the project, so the generated client resolves openapi-fetch from its node_modules.
  const dir = mkdtempSync(path.join(projectRoot, 'dist', 'client-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(path.join(dir, 'api.d.ts'), astToString(await openapiTS(document)))
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  copyFileSync(path.join(projectRoot, 'docs', 'client', 'flow.ts'), path.join(dir, 'flow.ts'))

  const program = ts.createProgram([path.join(dir, 'flow.ts')], {
    strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [], lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], noEmitOnError: true, outDir: dir,
  })
  const diagnostics = ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
  t.same(diagnostics, [], 'no compile error')
  t.notOk(program.emit().emitSkipped, 'compiled')

  const flow: CompiledFlow = await import(pathToFileURL(path.join(dir, 'flow.js')).href)
  const result = await flow.quoteAndPlace(`${address}/v2`, apiKey)
  t.equal(result.charged, result.quotedPrice, 'charged the quoted price')
  t.equal(result.order.status, 'created')
  t.equal(result.order.price, result.quotedPrice)
})
