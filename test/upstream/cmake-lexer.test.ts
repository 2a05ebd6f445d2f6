import { strict as assert } from 'node:assert';
import { evaluateArgs, expandVariables, parseCMake, splitList } from '../../src/upstream/facts/cmake-lexer.js';

const names = (text: string) => parseCMake(text).commands.map((c) => c.name);
const args = (text: string, vars = new Map<string, string>()) => parseCMake(text).commands.map((c) => evaluateArgs(c.args, vars));

describe('CMake reader', () => {
  it('reads commands spanning lines, with comments between arguments', () => {
    const p = parseCMake('find_package(\n  hip   # the runtime\n  5.7\n  REQUIRED\n)\nmessage(STATUS done)\n');
    assert.deepEqual(p.errors, []);
    assert.deepEqual(p.commands.map((c) => [c.name, c.line, c.args.map((a) => a.value)]), [
      ['find_package', 1, ['hip', '5.7', 'REQUIRED']],
      ['message', 6, ['STATUS', 'done']],
    ]);
    assert.equal(p.commands[0]!.args[1]!.line, 3);
  });

  it('lower-cases command names and allows blanks before the parenthesis', () => {
    assert.deepEqual(names('FIND_PACKAGE (x)\nFetchContent_Declare\t(y)'), ['find_package', 'fetchcontent_declare']);
  });

  it('skips line comments and bracket comments of any level, even ones holding commands and parentheses', () => {
    const text = [
      '# find_package(Comment)',
      '#[[ find_package(Bracket) ) ( ]]',
      '#[==[ find_package(Level2) ]] ]=] still inside',
      ']==]',
      'option(REAL "x" ON) # option(NOT_THIS)',
      'find_package(A #[[ inline ]] 1.0)',
    ].join('\n');
    assert.deepEqual(args(text), [['REAL', 'x', 'ON'], ['A', '1.0']]);
    assert.deepEqual(names(text), ['option', 'find_package']);
  });

  it('unescapes quoted arguments and joins continued lines', () => {
    const [a] = args('set(X "a \\"b\\" c\\\\d \\$e\\tf\\ng;h" "one\\\ntwo")');
    assert.deepEqual(a, ['X', 'a "b" c\\d $e\tf\ng;h', 'onetwo']);
  });

  it('keeps bracket arguments verbatim, without the newline after the opening', () => {
    const p = parseCMake('file(WRITE out [=[\nfind_package(NotThis) ]] "not a quote\n]=])\nfind_package(Yes)');
    assert.deepEqual(names('file(WRITE out [=[\nfind_package(NotThis) ]] "not a quote\n]=])\nfind_package(Yes)'), ['file', 'find_package']);
    assert.equal(p.commands[0]!.args[2]!.kind, 'bracket');
    assert.equal(p.commands[0]!.args[2]!.value, 'find_package(NotThis) ]] "not a quote\n');
    assert.equal(p.commands[1]!.line, 4);
  });

  it('keeps nested parentheses inside a command and legacy quoted parts of unquoted arguments', () => {
    const [a, b] = args('if((A OR B) AND C)\nadd_definitions(-DNAME="a b" -DX)');
    assert.deepEqual(a, ['A', 'OR', 'B', 'AND', 'C']);
    assert.deepEqual(b, ['-DNAME="a b"', '-DX']);
  });

  it('splits unquoted arguments into list elements after expansion, but not quoted ones', () => {
    const vars = new Map([['L', 'gfx900;gfx906']]);
    assert.deepEqual(args('set(T ${L} "${L}" a\\;b)', vars), [['T', 'gfx900', 'gfx906', 'gfx900;gfx906', 'a;b']]);
    assert.deepEqual(splitList('a;;b;'), ['a', 'b']);
  });

  it('expands nested variable references and leaves unknown ones and $ENV{} as written', () => {
    const vars = new Map([
      ['P', 'HIP'],
      ['HIP_VERSION', '6.3'],
    ]);
    assert.equal(expandVariables('${${P}_VERSION}', vars), '6.3');
    assert.equal(expandVariables('${UNKNOWN}/x $ENV{HOME} ${P', vars), '${UNKNOWN}/x $ENV{HOME} ${P');
  });

  it('reports what CMake would reject, with the line, and stops there', () => {
    assert.match(parseCMake('set(A "unterminated)\n').errors[0]!.message, /unterminated quoted argument/);
    assert.deepEqual(parseCMake('a(x)\nb(\n').errors, [{ line: 2, message: 'unterminated b( started here' }]);
    assert.equal(parseCMake('#[[ never closed\n').errors[0]!.message, 'unterminated bracket comment');
    assert.equal(parseCMake('x(y [==[ no end ]=]').errors[0]!.message, 'unterminated bracket argument');
    assert.match(parseCMake('lonely\n').errors[0]!.message, /expected "\(" after lonely/);
  });
});
