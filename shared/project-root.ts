import path from 'node:path'
import { fileURLToPath } from 'node:url'

// The project root, where the files read at run time from the project's own tree live (the
// migrations, the demo rate card, package.json, development secrets): above both shared/ (ts) and
// dist/shared/ (js), in a checkout and in the image alike.
const here = fileURLToPath(import.meta.url)
export const projectRoot = path.resolve(path.dirname(here), here.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..')
