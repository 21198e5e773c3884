import { describe, expect, it } from 'vitest';
import { readRelated, writeRelated } from '../../../../src/messaging/mms/mime-multipart.js';
import { Mm7Error } from '../../../../src/messaging/mms/mm7-error.js';

const IDS = { start: 'root', content: 'content' };
const XML = '<env:Envelope xmlns:env="urn:x"><env:Body>é</env:Body></env:Envelope>';

/** A multipart/related body around an XML root and the given raw entities, CRLF line ends. */
function related(...entities: string[]): Buffer {
  const root = `Content-Type: text/xml\r\n\r\n${XML}`;
  return Buffer.from(
    ['preamble', ...[root, ...entities].map((e) => `--top\r\n${e}`), '--top--', 'epilogue'].join(
      '\r\n',
    ),
    'latin1',
  );
}

/** A multipart/mixed entity that holds one text part `depth` multiparts down. */
function nested(depth: number): string {
  if (depth === 0) return 'Content-Type: text/plain\r\n\r\ndeep';
  const b = `n${depth}`;
  return `Content-Type: multipart/mixed; boundary="${b}"\r\nContent-ID: <${b}>\r\n\r\n--${b}\r\n${nested(depth - 1)}\r\n--${b}--`;
}

describe('writeRelated', () => {
  it('writes the root, then the parts nested in multipart/mixed, byte for byte', () => {
    const parts = [{ contentType: 'text/plain', contentId: '<t>', body: Buffer.from('hi') }];
    const { contentType, body } = writeRelated('<a/>', parts, IDS, 'B');
    expect(contentType).toBe('multipart/related; type="text/xml"; start="<root>"; boundary="B"');
    expect(body.toString('latin1')).toBe(
      [
        '--B',
        'Content-Type: text/xml; charset="utf-8"',
        'Content-ID: <root>',
        'Content-Transfer-Encoding: 8bit',
        '',
        '<a/>',
        '--B',
        'Content-Type: multipart/mixed; boundary="c=B"',
        'Content-ID: <content>',
        'Content-Transfer-Encoding: binary',
        '',
        '--c=B',
        'Content-Type: text/plain',
        'Content-ID: <t>',
        'Content-Transfer-Encoding: binary',
        '',
        'hi',
        '--c=B--',
        '',
        '--B--',
        '',
      ].join('\r\n'),
    );
  });

  it('writes the root alone when there are no parts', () => {
    const { body } = writeRelated('<a/>', [], IDS, 'B');
    expect(body.toString('latin1')).not.toContain('multipart/mixed');
    expect(body.toString('latin1')).toMatch(/^--B\r\n[\s\S]*<a\/>\r\n--B--\r\n$/);
  });

  it('chooses another boundary when the random one would not do, and refuses a given one', () => {
    const clash = [{ contentType: 'text/plain', contentId: '', body: Buffer.from('x\r\n--c=B') }];
    expect(() => writeRelated('<a/>', clash, IDS, 'B')).toThrow(
      'the boundary B occurs inside the content: choose another',
    );
    const { contentType, body } = writeRelated('<a/>', clash, IDS);
    expect(readRelated(contentType, body).parts[0]!.body.toString()).toBe('x\r\n--c=B');
  });

  it('refuses header values and boundaries it cannot write', () => {
    const part = { contentType: 'text/plain', contentId: 'ok', body: Buffer.alloc(0) };
    expect(() => writeRelated('<a/>', [part, { ...part, contentType: '' }], IDS, 'B')).toThrow(
      'Expected printable ASCII for parts[1].contentType but received ""',
    );
    expect(() => writeRelated('<a/>', [{ ...part, contentId: 'a\r\nb' }], IDS, 'B')).toThrow(
      'Expected printable ASCII for parts[0].contentId',
    );
    expect(() => writeRelated('<a/>', [part], IDS, 'x'.repeat(69))).toThrow(RangeError);
    expect(() => writeRelated('<a/>', [part], IDS, '')).toThrow(RangeError);
  });
});

describe('readRelated', () => {
  it('reads back what writeRelated writes', () => {
    const parts = [
      { contentType: 'image/png', contentId: 'p', body: Buffer.from([0, 13, 10, 45, 45, 255]) },
      { contentType: 'text/plain', contentId: '', body: Buffer.from('t'), filename: 'a b é.txt' },
    ];
    const { contentType, body } = writeRelated(XML, parts, IDS, 'B');
    expect(readRelated(contentType, body)).toEqual({ xml: XML, parts });
  });

  it('reads a bare XML body in its charset', () => {
    const latin1 = Buffer.from(XML, 'latin1');
    expect(readRelated('text/xml; charset="ISO-8859-1"', latin1)).toEqual({ xml: XML, parts: [] });
    expect(readRelated('application/soap+xml', Buffer.from(XML))).toEqual({ xml: XML, parts: [] });
  });

  it('takes a part name from Content-Location, Content-Disposition or the name parameter', () => {
    const body = related(
      'Content-Type: image/gif\r\nContent-Location: a%20b.gif\r\n\r\nA',
      'Content-Type: image/gif\r\nContent-Location: 100%.gif\r\n\r\nB',
      'Content-Type: image/gif\r\nContent-Disposition: inline; filename="q \\"x\\".gif"\r\n\r\nC',
      'Content-Type: image/gif; name=n.gif\r\n\r\nD',
    );
    const { parts } = readRelated('multipart/related; boundary="top"', body);
    expect(parts.map((p) => p.filename)).toEqual(['a b.gif', '100%.gif', 'q "x".gif', 'n.gif']);
  });

  it('unfolds headers, keeps the first of a repeated one and undoes quoted-printable', () => {
    const body = related(
      'Content-Type: text/plain;\r\n charset=utf-8\r\nContent-Type: image/gif\r\n' +
        'Content-Transfer-Encoding: Quoted-Printable\r\n\r\n21 =C2=B0C=\r\n, =3D=\nok',
    );
    expect(readRelated('multipart/related; boundary=top', body).parts).toEqual([
      { contentType: 'text/plain; charset=utf-8', contentId: '', body: Buffer.from('21 °C, =ok') },
    ]);
  });

  it('flattens multiparts nested four deep and refuses a fifth', () => {
    const four = readRelated('multipart/related; boundary=top', related(nested(4)));
    expect(four.parts).toEqual([
      { contentType: 'text/plain', contentId: '', body: Buffer.from('deep') },
    ]);
    const five = related(nested(5));
    expect(() => readRelated('multipart/related; boundary=top', five)).toThrow(Mm7Error);
    expect(() => readRelated('multipart/related; boundary=top', five)).toThrow(
      'the multipart/mixed part <n1> nests multiparts more than 4 deep',
    );
  });

  it('throws Mm7Error for a body it cannot read', () => {
    const read = (contentType: string, body: Buffer) => () => readRelated(contentType, body);
    const gif = related('Content-Type: image/gif\r\nContent-ID: <g>\r\n\r\nGIF');
    expect(read('multipart/related; boundary=top; start=<g>', gif)).toThrow(
      new Mm7Error('the SOAP envelope part is image/gif, not text/xml'),
    );
    expect(
      read('multipart/related; boundary=top', related('Content-Type: multipart/mixed\r\n\r\nx')),
    ).toThrow(
      new Mm7Error('the multipart/mixed part <> is multipart/mixed without a boundary parameter'),
    );
    // A line that only starts with the boundary is not a boundary line.
    expect(read('multipart/related; boundary=top', Buffer.from('--topper\r\n--top-\r\n'))).toThrow(
      new Mm7Error('the HTTP body has no --top boundary line'),
    );
    expect(read('text/plain', gif)).toThrow(
      new Mm7Error('expected a multipart/related body but the Content-Type is text/plain'),
    );
  });
});
