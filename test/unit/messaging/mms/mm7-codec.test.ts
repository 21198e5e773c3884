import { describe, expect, it } from 'vitest';
import {
  encodeDeliverReq,
  encodeDeliverRsp,
  encodeDeliveryReportReq,
  encodeDeliveryReportRsp,
  encodeSubmitReq,
  encodeSubmitRsp,
  MM7_NAMESPACE,
  Mm7Error,
  mm7RequestKind,
  mm7StatusSucceeded,
  parseDeliverReq,
  parseDeliveryReportReq,
  parseSubmitReq,
  parseSubmitRsp,
  type DeliverReq,
  type DeliveryReportReq,
  type Mm7Part,
  type SubmitReq,
} from '../../../../src/messaging/mms/mm7-codec.js';

const SOAP_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
// A 1x1 GIF, the smallest real image there is.
const GIF_BASE64 = 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const EVERY_BYTE = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

const PARTS: Mm7Part[] = [
  {
    contentType: 'text/plain; charset=utf-8',
    contentId: 'text',
    body: Buffer.from('Hello from voxgate ✓\r\n--not a boundary\r\n'),
  },
  {
    contentType: 'image/png',
    contentId: 'media0',
    body: Buffer.concat([PNG_SIGNATURE, EVERY_BYTE, Buffer.from('\r\n\r\n'), EVERY_BYTE]),
    filename: 'photo été 1.png',
  },
  {
    contentType: 'image/gif',
    contentId: 'media1',
    body: Buffer.from(GIF_BASE64, 'base64'),
    filename: 'sun.gif',
  },
];

const SUBMIT: SubmitReq = {
  transactionId: 'b7c1e0d2-5a8e-4f57-9d0a-1e2f3a4b5c6d',
  vaspId: 'voxgate',
  vasId: 'mms',
  senderAddress: '14155550100',
  recipients: ['447700900123', '447700900456'],
  subject: 'Holiday pictures',
  deliveryReport: true,
  expirySeconds: 3600,
  parts: PARTS,
};

/** A SOAP envelope around `body`, as an MMSC writes one (prefixed names, indented). */
function soapEnvelope(body: string, header = true): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<soap-env:Envelope xmlns:soap-env="${SOAP_NS}">`,
    header
      ? `  <soap-env:Header><mm7:TransactionID xmlns:mm7="${MM7_NAMESPACE}" soap-env:mustUnderstand="1">tx-9</mm7:TransactionID></soap-env:Header>`
      : '',
    `  <soap-env:Body>${body}</soap-env:Body>`,
    '</soap-env:Envelope>',
  ].join('\r\n');
}

// A DeliverReq in the shape MMSCs send: a preamble, a namespaced envelope with every element
// prefixed, content nested as multipart/mixed whose boundary starts with the outer one, header
// names in any case, a quoted-printable text, a base64 image and an epilogue.
const B = 'NextPart_000_0028_01C19839.84698430';
const DELIVER_CONTENT_TYPE = `multipart/related; boundary=${B}; type=text/xml; start="</cmvt256/mm7-deliver>"`;
const DELIVER_FIXTURE = [
  'This is a multi-part message in MIME format.',
  '',
  `--${B}`,
  'Content-Type: text/xml; charset="utf-8"',
  'Content-ID: </cmvt256/mm7-deliver>',
  '',
  '<?xml version="1.0" ?>',
  `<env:Envelope xmlns:env="${SOAP_NS}">`,
  '  <env:Header>',
  `    <mm7:TransactionID xmlns:mm7="${MM7_NAMESPACE}" env:mustUnderstand="1">vas00200-sub</mm7:TransactionID>`,
  '  </env:Header>',
  '  <env:Body>',
  `    <mm7:DeliverReq xmlns:mm7="${MM7_NAMESPACE}">`,
  '      <mm7:MM7Version>6.8.0</mm7:MM7Version>',
  '      <mm7:MMSRelayServerID>240.110.75.34</mm7:MMSRelayServerID>',
  '      <mm7:LinkedID>wthr8391</mm7:LinkedID>',
  '      <mm7:Sender><mm7:Number>+447700900123</mm7:Number></mm7:Sender>',
  '      <mm7:Recipients>',
  '        <mm7:To><mm7:ShortCode>84433</mm7:ShortCode></mm7:To>',
  '        <mm7:Cc><mm7:RFC2822Address displayOnly="true">Alice &lt;alice@example.com&gt;</mm7:RFC2822Address></mm7:Cc>',
  '      </mm7:Recipients>',
  '      <mm7:TimeStamp>2024-03-01T09:30:47Z</mm7:TimeStamp>',
  '      <mm7:Priority>Normal</mm7:Priority>',
  '      <mm7:Subject>Weather &amp; tides</mm7:Subject>',
  '      <!-- the content follows -->',
  '      <mm7:Content href="cid:content-1" allowAdaptations="true"/>',
  '    </mm7:DeliverReq>',
  '  </env:Body>',
  '</env:Envelope>',
  `--${B}`,
  `content-type: multipart/mixed;`,
  `\tBOUNDARY="${B}_inner"`,
  'CONTENT-ID: <content-1>',
  '',
  `--${B}_inner`,
  'Content-Type: application/smil; charset=utf-8',
  'Content-ID: <smil>',
  '',
  '<smil><body><par><img src="cid:sun.gif"/><text src="cid:text"/></par></body></smil>',
  `--${B}_inner`,
  'Content-Type: text/plain; charset=utf-8',
  'Content-ID: <text>',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  'Sunny, 21 =C2=B0C. High tide =',
  'at 14:05.',
  `--${B}_inner`,
  'Content-Type: image/gif; name="sun.gif"',
  'Content-ID: <sun.gif>',
  'Content-Disposition: attachment; filename="sun.gif"',
  'Content-Transfer-Encoding: BASE64',
  '',
  GIF_BASE64.slice(0, 30),
  GIF_BASE64.slice(30),
  `--${B}_inner--`,
  '',
  `--${B}--`,
  'an epilogue nobody reads',
].join('\r\n');

describe('MM7 SubmitReq', () => {
  it('reads back what it writes, binary content byte for byte', () => {
    const { contentType, body } = encodeSubmitReq(SUBMIT, 'mm7-test-boundary');
    expect(contentType).toBe(
      'multipart/related; type="text/xml"; start="<soap-start>"; boundary="mm7-test-boundary"',
    );
    const text = body.toString('latin1');
    expect(text).toContain('Content-ID: <soap-start>');
    expect(text).toContain('Content-ID: <mms-content>');
    expect(text).toContain('Content-Type: multipart/mixed; boundary="c=mm7-test-boundary"');
    expect(text).toContain('Content-Location: photo%20%C3%A9t%C3%A9%201.png');
    expect(text).toContain('env:mustUnderstand="1">b7c1e0d2-5a8e-4f57-9d0a-1e2f3a4b5c6d<');
    expect(text).toContain('<To><Number>+447700900123</Number></To>');
    expect(text).toContain('<ExpiryDate>PT3600S</ExpiryDate>');
    expect(text).toContain('<Content href="cid:mms-content" allowAdaptations="true"/>');
    expect(mm7RequestKind(text)).toBe('SubmitReq');

    const parsed = parseSubmitReq(contentType, body);
    expect(parsed).toEqual(SUBMIT);
    expect(parsed.parts[1]!.body.equals(PARTS[1]!.body)).toBe(true);
  });

  it('chooses a boundary of its own when given none', () => {
    const { contentType, body } = encodeSubmitReq(SUBMIT);
    expect(contentType).toMatch(/boundary="mm7-[0-9a-f]{24}"$/);
    expect(parseSubmitReq(contentType, body)).toEqual(SUBMIT);
  });

  it('escapes the characters XML reserves and reads them back', () => {
    const subject = `Tom & Jerry <"cartoons"> 'n' more`;
    const { contentType, body } = encodeSubmitReq({ ...SUBMIT, subject, parts: [] }, 'b');
    expect(body.toString('utf8')).toContain(
      '<Subject>Tom &amp; Jerry &lt;&quot;cartoons&quot;&gt; &apos;n&apos; more</Subject>',
    );
    expect(body.toString('utf8')).not.toContain('<Content');
    expect(parseSubmitReq(contentType, body)).toEqual({ ...SUBMIT, subject, parts: [] });
  });

  it('decodes a base64 part among content parts that are not nested', () => {
    const xml = soapEnvelope(
      `<SubmitReq xmlns="${MM7_NAMESPACE}"><MM7Version>6.8.0</MM7Version>` +
        '<SenderIdentification><SenderAddress>+14155550100</SenderAddress></SenderIdentification>' +
        '<Recipients><To><Number>+447700900123</Number></To></Recipients>' +
        '<ExpiryDate>P1DT2H</ExpiryDate><DeliveryReport>1</DeliveryReport>' +
        '<Content href="cid:sun.gif"/></SubmitReq>',
    );
    const body = [
      '--plain',
      'Content-Type: text/xml',
      '',
      xml,
      '--plain',
      'Content-Type: image/gif',
      'Content-ID: <sun.gif>',
      'Content-Transfer-Encoding: base64',
      '',
      GIF_BASE64,
      '--plain',
      '',
      'no headers, so text/plain',
      '--plain--',
    ].join('\r\n');
    const parsed = parseSubmitReq('Multipart/Related; boundary=plain', Buffer.from(body));
    expect(parsed).toMatchObject({
      transactionId: 'tx-9',
      senderAddress: '14155550100',
      recipients: ['447700900123'],
      deliveryReport: true,
      expirySeconds: 26 * 3600,
    });
    expect(parsed.parts).toEqual([
      { contentType: 'image/gif', contentId: 'sun.gif', body: Buffer.from(GIF_BASE64, 'base64') },
      {
        contentType: 'text/plain; charset=us-ascii',
        contentId: '',
        body: Buffer.from('no headers, so text/plain'),
      },
    ]);
  });

  it('reads a body written with bare LF line ends', () => {
    const { contentType, body } = encodeSubmitReq(
      {
        ...SUBMIT,
        parts: [{ contentType: 'text/plain', contentId: 't', body: Buffer.from('hi') }],
      },
      'lf',
    );
    const lf = Buffer.from(body.toString('utf8').replace(/\r\n/g, '\n'));
    expect(parseSubmitReq(contentType, lf).parts).toEqual([
      { contentType: 'text/plain', contentId: 't', body: Buffer.from('hi') },
    ]);
  });

  it('refuses what it cannot write', () => {
    expect(() => encodeSubmitReq({ ...SUBMIT, recipients: ['tel:123'] })).toThrow(
      'Expected E.164 digits for recipients[0] but received "tel:123"',
    );
    expect(() => encodeSubmitReq({ ...SUBMIT, recipients: [] })).toThrow(RangeError);
    expect(() => encodeSubmitReq({ ...SUBMIT, expirySeconds: 0 })).toThrow(RangeError);
    expect(() => encodeSubmitReq({ ...SUBMIT, subject: 'bell \u0007' })).toThrow('U+0007');
    const clash: Mm7Part = { contentType: 'text/plain', contentId: 'x', body: Buffer.from('--b') };
    expect(() => encodeSubmitReq({ ...SUBMIT, parts: [clash] }, 'b')).toThrow(
      'the boundary b occurs inside the content',
    );
    expect(() => encodeSubmitReq(SUBMIT, 'has space')).toThrow(RangeError);
  });
});

describe('MM7 SubmitRsp', () => {
  it('reads back what it writes', () => {
    const rsp = { transactionId: 'tx-1', statusCode: 1000, statusText: 'Success', messageId: 'm1' };
    const xml = encodeSubmitRsp(rsp);
    expect(mm7RequestKind(xml)).toBe('SubmitRsp');
    expect(parseSubmitRsp(xml)).toEqual(rsp);
  });

  it('keeps the code and text of an error status', () => {
    const xml = soapEnvelope(
      `<SubmitRsp xmlns="${MM7_NAMESPACE}"><MM7Version>6.8.0</MM7Version><Status>` +
        '<StatusCode>2007</StatusCode><StatusText>Message format corrupt</StatusText>' +
        '<Details>part 2 unreadable</Details></Status></SubmitRsp>',
    );
    const rsp = parseSubmitRsp(xml);
    expect(rsp).toEqual({
      transactionId: 'tx-9',
      statusCode: 2007,
      statusText: 'Message format corrupt',
    });
    expect(mm7StatusSucceeded(rsp.statusCode)).toBe(false);
    expect(mm7StatusSucceeded(1100)).toBe(true);
  });

  it('reads the status of a SOAP Fault with an RSErrorRsp', () => {
    const xml = soapEnvelope(
      '<soap-env:Fault><faultcode>soap-env:Client</faultcode><faultstring>Client error</faultstring>' +
        `<detail><RSErrorRsp xmlns="${MM7_NAMESPACE}"><MM7Version>6.8.0</MM7Version>` +
        '<Status><StatusCode>4004</StatusCode></Status></RSErrorRsp></detail></soap-env:Fault>',
    );
    expect(parseSubmitRsp(xml)).toEqual({
      transactionId: 'tx-9',
      statusCode: 4004,
      statusText: 'Validation error',
    });
    const bare = soapEnvelope(
      '<soap-env:Fault><faultcode>soap-env:Server</faultcode><faultstring>down</faultstring></soap-env:Fault>',
    );
    expect(() => parseSubmitRsp(bare)).toThrow('SOAP Fault: soap-env:Server down');
  });
});

describe('MM7 DeliveryReportReq', () => {
  it('reads back what it writes, and answers it', () => {
    const req: DeliveryReportReq = {
      transactionId: 'dr-1',
      messageId: '041502073667',
      recipient: '447700900123',
      sender: '14155550100',
      date: '2024-03-01T09:30:47Z',
      mmStatus: 'Retrieved',
      statusText: 'Retrieved & read',
    };
    const xml = encodeDeliveryReportReq(req);
    expect(mm7RequestKind(xml)).toBe('DeliveryReportReq');
    expect(parseDeliveryReportReq(xml)).toEqual(req);
    const minimal = { ...req, recipient: 'bob@example.com', mmStatus: 'Expired' };
    delete minimal.sender;
    delete minimal.date;
    delete minimal.statusText;
    expect(parseDeliveryReportReq(encodeDeliveryReportReq(minimal))).toEqual(minimal);

    const answer = encodeDeliveryReportRsp('dr-1');
    expect(mm7RequestKind(answer)).toBe('DeliveryReportRsp');
    expect(answer).toContain('<StatusCode>1000</StatusCode><StatusText>Success</StatusText>');
    expect(answer).toContain('env:mustUnderstand="1">dr-1</mm7:TransactionID>');
  });

  it('refuses an MMStatus TS 23.140 does not define', () => {
    expect(() =>
      encodeDeliveryReportReq({
        transactionId: 't',
        messageId: 'm',
        recipient: '1',
        mmStatus: 'Ok',
      }),
    ).toThrow('for mmStatus but received Ok');
  });
});

describe('MM7 DeliverReq', () => {
  it('reads back what it writes, binary content byte for byte', () => {
    const req: DeliverReq = {
      transactionId: 'dl-1',
      sender: '447700900123',
      recipients: ['14155550100', 'someone@example.com', 'VOXGATE'],
      subject: 'Re: <pictures>',
      linkedId: 'b7c1e0d2',
      parts: PARTS,
    };
    const { contentType, body } = encodeDeliverReq(req, 'dl');
    expect(body.toString('latin1')).toContain('<ShortCode>VOXGATE</ShortCode>');
    expect(mm7RequestKind(body.toString('latin1'))).toBe('DeliverReq');
    expect(parseDeliverReq(contentType, body)).toEqual(req);

    const answer = encodeDeliverRsp('dl-1', 2002);
    expect(mm7RequestKind(answer)).toBe('DeliverRsp');
    expect(answer).toContain('<StatusCode>2002</StatusCode><StatusText>Address Error</StatusText>');
  });

  it('reads one in the shape an MMSC sends', () => {
    const req = parseDeliverReq(DELIVER_CONTENT_TYPE, Buffer.from(DELIVER_FIXTURE, 'latin1'));
    expect(req).toEqual({
      transactionId: 'vas00200-sub',
      sender: '447700900123',
      recipients: ['84433'],
      subject: 'Weather & tides',
      linkedId: 'wthr8391',
      parts: [
        {
          contentType: 'application/smil; charset=utf-8',
          contentId: 'smil',
          body: Buffer.from(
            '<smil><body><par><img src="cid:sun.gif"/><text src="cid:text"/></par></body></smil>',
          ),
        },
        {
          contentType: 'text/plain; charset=utf-8',
          contentId: 'text',
          body: Buffer.from('Sunny, 21 °C. High tide at 14:05.'),
        },
        {
          contentType: 'image/gif; name="sun.gif"',
          contentId: 'sun.gif',
          body: Buffer.from(GIF_BASE64, 'base64'),
          filename: 'sun.gif',
        },
      ],
    });
    expect(req.parts[2]!.body.subarray(0, 6).toString('latin1')).toBe('GIF89a');
  });
});

describe('mm7RequestKind', () => {
  it('names what it does not know unknown', () => {
    expect(mm7RequestKind('not xml at all')).toBe('unknown');
    expect(mm7RequestKind(soapEnvelope('<CancelReq/>'))).toBe('unknown');
    expect(mm7RequestKind(soapEnvelope(''))).toBe('unknown');
  });
});

describe('Mm7Error', () => {
  const deliver = Buffer.from(DELIVER_FIXTURE, 'latin1');

  it.each([
    ['no boundary', 'multipart/related; type="text/xml"', deliver, 'without a boundary parameter'],
    [
      'a boundary not in the body',
      'multipart/related; boundary=elsewhere',
      deliver,
      'no --elsewhere',
    ],
    [
      'no closing boundary',
      DELIVER_CONTENT_TYPE,
      deliver.subarray(0, deliver.indexOf(`--${B}--`)),
      `ends without its closing --${B}-- line`,
    ],
    [
      'a start naming no part',
      `multipart/related; boundary=${B}; start="<elsewhere>"`,
      deliver,
      'no part with Content-ID <elsewhere>',
    ],
    [
      'no SOAP part',
      'multipart/related; boundary=x',
      Buffer.from('--x\r\nContent-Type: image/gif\r\n\r\nGIF\r\n--x--\r\n'),
      'no text/xml part, so no SOAP envelope',
    ],
    [
      'an unknown transfer encoding',
      'multipart/related; boundary=x',
      Buffer.from(
        '--x\r\nContent-Type: text/xml\r\nContent-Transfer-Encoding: uuencode\r\n\r\n<a/>\r\n--x--',
      ),
      'unknown Content-Transfer-Encoding uuencode',
    ],
    ['a body that is not MIME', 'image/gif', deliver, 'expected a multipart/related body'],
  ])('is thrown for %s', (_, contentType, body, message) => {
    expect(() => parseDeliverReq(contentType, body)).toThrow(Mm7Error);
    expect(() => parseDeliverReq(contentType, body)).toThrow(message);
  });

  it.each([
    ['no TransactionID', soapEnvelope('<SubmitRsp/>', false), 'no mm7:TransactionID'],
    ['no Status', soapEnvelope('<SubmitRsp><MM7Version/></SubmitRsp>'), 'SubmitRsp has no Status'],
    [
      'no StatusCode',
      soapEnvelope('<SubmitRsp><Status><StatusText>x</StatusText></Status></SubmitRsp>'),
      'SubmitRsp Status has no StatusCode',
    ],
    ['another message', encodeDeliverRsp('tx'), 'the SOAP Body holds DeliverRsp, not SubmitRsp'],
    ['no envelope', '<html><body>502 Bad Gateway</body></html>', 'not a SOAP envelope'],
    ['an empty answer', '', 'not a SOAP envelope'],
    [
      'a DOCTYPE',
      `<!DOCTYPE x [<!ENTITY a "b">]>${encodeSubmitRsp({ transactionId: 't', statusCode: 1000, statusText: '' })}`,
      'MUST NOT contain a DOCTYPE',
    ],
    ['a stray <', soapEnvelope('<SubmitRsp>1 < 2</SubmitRsp>'), 'not well formed at offset'],
    ['a misnested tag', soapEnvelope('<SubmitRsp><Status></SubmitRsp>'), 'not well formed'],
  ])('is thrown by parseSubmitRsp for %s', (_, xml, message) => {
    expect(() => parseSubmitRsp(xml)).toThrow(Mm7Error);
    expect(() => parseSubmitRsp(xml)).toThrow(message);
  });

  it('is thrown for a missing required element of each request', () => {
    const report = encodeDeliveryReportReq({
      transactionId: 't',
      messageId: 'm',
      recipient: '1',
      mmStatus: 'Rejected',
    });
    expect(() => parseDeliveryReportReq(report.replace(/<MMStatus>.*<\/MMStatus>/, ''))).toThrow(
      'DeliveryReportReq has no MMStatus',
    );
    expect(() => parseDeliveryReportReq(report.replace(/<Recipient>.*<\/Recipient>/, ''))).toThrow(
      'DeliveryReportReq has no Recipient',
    );
    const noSender = DELIVER_FIXTURE.replace(/<mm7:Sender>.*<\/mm7:Sender>/, '');
    expect(() => parseDeliverReq(DELIVER_CONTENT_TYPE, Buffer.from(noSender))).toThrow(
      'DeliverReq has no Sender',
    );
    const { contentType, body } = encodeSubmitReq(SUBMIT, 'b');
    const noRecipients = body.toString('latin1').replace(/<Recipients>.*<\/Recipients>/, '');
    expect(() => parseSubmitReq(contentType, Buffer.from(noRecipients, 'latin1'))).toThrow(
      'SubmitReq has no Recipients',
    );
  });
});
