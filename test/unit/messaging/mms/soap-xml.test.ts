import { describe, expect, it } from 'vitest';
import { Mm7Error } from '../../../../src/messaging/mms/mm7-error.js';
import {
  child,
  descendant,
  optionalText,
  optionalXmlElement,
  parseXml,
  requiredChild,
  requiredText,
  soapBodyElement,
  soapBodyOf,
  xmlElement,
} from '../../../../src/messaging/mms/soap-xml.js';

describe('xmlElement', () => {
  it('escapes text and attribute values, and takes child elements as written', () => {
    expect(xmlElement('a', `<"&'>`, { 'x:y': '"&' })).toBe(
      '<a x:y="&quot;&amp;">&lt;&quot;&amp;&apos;&gt;</a>',
    );
    expect(xmlElement('a', [xmlElement('b', ''), optionalXmlElement('c', undefined)])).toBe(
      '<a><b></b></a>',
    );
    expect(optionalXmlElement('c', '1')).toBe('<c>1</c>');
  });

  it('refuses characters XML 1.0 cannot carry', () => {
    expect(() => xmlElement('a', 'x\u001f')).toThrow(
      new RangeError('Expected text XML 1.0 can carry but received U+001f in "x\\u001f"'),
    );
    expect(() => xmlElement('a', 'ok', { b: '\ufffe' })).toThrow('U+fffe');
    expect(xmlElement('a', '\t\r\n')).toBe('<a>\t\r\n</a>');
  });
});

describe('parseXml', () => {
  it('reads elements by local name, with attributes, entities, CDATA and comments', () => {
    const root = parseXml(
      '<?xml version="1.0"?><!-- c --><p:a xmlns:p="urn:p" p:k=\'v &amp; w\'>' +
        '<p:b>1 &lt; 2 &#x41;&#66;&#x110000;</p:b><c/><![CDATA[<raw>]]><b>second</b></p:a>',
    );
    const a = child(root, 'a')!;
    expect(a.attributes.get('k')).toBe('v & w');
    expect(a.attributes.get('p')).toBe('urn:p');
    expect(a.children.map((c) => c.name)).toEqual(['b', 'c', 'b']);
    expect(a.text).toBe('<raw>');
    expect(child(a, 'b')!.text).toBe('1 < 2 AB&#x110000;');
    expect(descendant(root, 'c')).toBe(a.children[1]);
    expect(descendant(root, 'd')).toBeUndefined();
  });

  it.each([
    ['<!DOCTYPE a><a/>', 'SOAP 1.1 section 3: a SOAP message MUST NOT contain a DOCTYPE'],
    ['<a></b>', 'the XML is not well formed: </b> does not close an element'],
    ['</a>', 'the XML is not well formed: </a> does not close an element'],
    ['<a>1 < 2</a>', 'the XML is not well formed at offset 5'],
    ['<a><b>', 'the XML ends inside <b>'],
  ])('throws Mm7Error for %s', (xml, message) => {
    expect(() => parseXml(xml)).toThrow(new Mm7Error(message));
  });
});

describe('reading helpers', () => {
  const root = parseXml('<r><s> x </s><e>  </e></r>');
  const r = child(root, 'r')!;

  it('finds text, trimmed, and says what is missing', () => {
    expect(optionalText(r, 's')).toBe('x');
    expect(optionalText(r, 'none')).toBeUndefined();
    expect(requiredText(r, 's')).toBe('x');
    expect(() => requiredText(r, 'e')).toThrow(new Mm7Error('r has no e'));
    expect(() => requiredText(r, 'none', 'the report')).toThrow('the report has no none');
    expect(requiredChild(r, 'e').name).toBe('e');
    expect(() => requiredChild(r, 'none')).toThrow(new Mm7Error('r has no none'));
  });

  it('finds the SOAP Body and the element in it', () => {
    const envelope = parseXml('<env:Envelope><env:Body><m:Req/></env:Body></env:Envelope>');
    expect(soapBodyOf(envelope).name).toBe('Body');
    expect(soapBodyElement(envelope, 'Req').name).toBe('Req');
    expect(() => soapBodyElement(envelope, 'Rsp')).toThrow(
      new Mm7Error('the SOAP Body holds Req, not Rsp'),
    );
    const empty = parseXml('<Envelope><Body/></Envelope>');
    expect(() => soapBodyElement(empty, 'Rsp')).toThrow('the SOAP Body holds nothing, not Rsp');
    expect(() => soapBodyOf(root)).toThrow(
      new Mm7Error('the XML is not a SOAP envelope with a Body'),
    );
  });
});
