// Tokenizes .kbs files with VS Code's own TextMate engine (vscode-textmate + vscode-oniguruma)
// and prints, as JSON, every line's tokens: [text, [scopes below source.kbs]]. tests/textmate.rs
// runs it and turns the result into one snapshot per shipped scenario.
'use strict';
const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const GRAMMAR = path.join(__dirname, '..', 'textmate', 'kbs.tmLanguage.json');
const WASM = path.join(path.dirname(require.resolve('vscode-oniguruma')), 'onig.wasm');

async function main(files) {
  await oniguruma.loadWASM(fs.readFileSync(WASM).buffer);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) =>
      scopeName === 'source.kbs'
        ? vsctm.parseRawGrammar(fs.readFileSync(GRAMMAR, 'utf8'), GRAMMAR)
        : null,
  });
  const grammar = await registry.loadGrammar('source.kbs');
  if (!grammar) throw new Error(`cannot load ${GRAMMAR}`);
  const out = {};
  for (const file of files) {
    let stack = vsctm.INITIAL;
    out[file] = fs.readFileSync(file, 'utf8').split('\n').map((line) => {
      const r = grammar.tokenizeLine(line, stack);
      stack = r.ruleStack;
      return r.tokens.map((t) => [
        line.substring(t.startIndex, t.endIndex),
        t.scopes.filter((s) => s !== 'source.kbs'),
      ]);
    });
  }
  process.stdout.write(JSON.stringify(out));
}

main(process.argv.slice(2)).catch((e) => {
  console.error(e);
  process.exit(1);
});
