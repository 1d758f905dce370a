import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { createConfig, lintFromString } from '@redocly/openapi-core'
// CommonJS packages whose named exports node cannot see from ESM: their default export is the module.
import spectralCore from '@stoplight/spectral-core'
import spectralParsers from '@stoplight/spectral-parsers'
import rulesetLoader from '@stoplight/spectral-ruleset-bundler/with-loader'
import { openApiDocument } from '../../../services/gateway/openapi/document.js'
import { projectRoot } from '../../helpers/processes.js'

// Two linters nobody here wrote, with the project's own configuration files (redocly.yaml and
// .spectral.yaml at the root, so `npx @redocly/cli lint` and `npx @stoplight/spectral-cli lint`
// find them too), run on the document the gateway serves.
const source = JSON.stringify(openApiDocument('https://api.courier.example'), null, 2)

t.test('Redocly recommended: no error, no warning', async (t) => {
  const config = await createConfig(fs.readFileSync(path.join(projectRoot, 'redocly.yaml'), 'utf8'))
  const problems = await lintFromString({ source, absoluteRef: 'openapi.json', config })
  t.same(problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`), [])
})

t.test('Spectral oas: no error, no warning', async (t) => {
  const spectral = new spectralCore.Spectral()
  spectral.setRuleset(await rulesetLoader.bundleAndLoadRuleset(path.join(projectRoot, '.spectral.yaml'), { fs, fetch }))
  const results = await spectral.run(new spectralCore.Document(source, spectralParsers.Json, 'openapi.json'))
  // Severity 0 is an error and 1 a warning; information and hints are advice.
  t.same(results.filter((result) => result.severity <= 1).map((result) => `${result.code}: ${result.message} at ${result.path.join('.')}`), [])
})
