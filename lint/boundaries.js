// The import boundaries of the project, as an ESLint rule (run by `npm run lint`, see eslint.config.js):
//
//   contract/             pure rules: imports contract/, api/, policies/, lib/policy, lib/errors only
//   webhook/, cli/,       the binaries: each imports contract/ and lib/ (and api/, policies/), never
//   controllers/<name>/   another binary; controllers/shared/ is plumbing the controllers share
//   lib/                  runtime plumbing: never imports contract/ or a binary
//
// A test may also import another binary's testing/ folder (its fakes). The rule resolves each relative
// import to the folder it lands in, so `../maintenance/x.js` and `../../controllers/maintenance/x.js`
// are the same import, and `../../api/maintenance/...` is not. ESLint's no-restricted-imports matches
// import strings, not where they resolve, which cannot tell those apart.
import { dirname, relative, resolve, sep } from 'node:path';

const CONTRACT_MAY_IMPORT = ['contract', 'api', 'policies', 'lib/policy', 'lib/errors'];

/** The unit a repository path belongs to: `controllers/<name>`, `lib/<module>`, or its top folder. */
export function unitOf(path) {
  const [top = '', second = ''] = path.split('/');
  if (top === 'controllers' || top === 'lib')
    return second ? `${top}/${second.replace(/\.[cm]?[jt]s$/, '')}` : top;
  return top;
}

const isBinary = (unit) =>
  unit === 'webhook' || unit === 'cli' || (unit.startsWith('controllers/') && unit !== 'controllers/shared');

/** Why `from` (a repository path) may not import `to`, or undefined when it may. */
export function forbidden(from, to) {
  const a = unitOf(from);
  const b = unitOf(to);
  if (a === b) return undefined;
  if (a === 'contract') {
    if (CONTRACT_MAY_IMPORT.some((u) => b === u || b.startsWith(`${u}/`))) return undefined;
    return `contract/ is pure rules: it imports only ${CONTRACT_MAY_IMPORT.join(', ')} (not ${b})`;
  }
  if (a.startsWith('lib/') && (b === 'contract' || isBinary(b) || b === 'controllers/shared'))
    return `lib/ is runtime plumbing: it imports no contract/ and no binary (not ${b})`;
  const testing = /(^|\/)[^/]+\.test\.ts$/.test(from) && to.split('/').includes('testing');
  if (isBinary(a) && isBinary(b) && !testing)
    return `${a}/ may not import ${b}/: binaries share rules through contract/ and plumbing through lib/`;
  if (b === 'controllers/shared' && !a.startsWith('controllers/'))
    return `controllers/shared/ is the controllers' plumbing; ${a}/ may not import it`;
  if (a === 'controllers/shared' && isBinary(b))
    return `controllers/shared/ may not import ${b}/: it serves every controller`;
  return undefined;
}

const rule = {
  meta: {
    type: 'problem',
    docs: { description: 'keep contract/, lib/ and each binary inside its import boundaries' },
    schema: [],
  },
  create(context) {
    const root = context.cwd;
    const file = relative(root, context.filename).split(sep).join('/');
    const check = (node) => {
      const source = node.source;
      if (!source || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = relative(root, resolve(dirname(context.filename), source.value))
        .split(sep)
        .join('/');
      const why = forbidden(file, target);
      if (why) context.report({ node: source, message: why });
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

export const boundaries = { rules: { imports: rule } };
