import fc from 'fast-check';
import { parseRetryAfter } from './client.js';
import { RedfishErrorCode, httpError, parseErrorBody, scrub } from './errors.js';
import { strongEtag } from './writes.js';

describe('Redfish error bodies', () => {
  it('reads the error envelope with its extended info', () => {
    const body = JSON.stringify({
      error: {
        code: 'Base.1.8.GeneralError',
        message: 'A general error has occurred.',
        '@Message.ExtendedInfo': [
          {
            MessageId: 'Base.1.8.PropertyValueNotInList',
            Message: 'Value Foo not in list',
            RelatedProperties: ['#/Boot'],
          },
        ],
      },
    });
    const parsed = parseErrorBody(body);
    expect(parsed.redfishCode).toBe('Base.1.8.GeneralError');
    expect(parsed.summary).toBe('A general error has occurred.; Value Foo not in list');
    expect(parsed.messages[0]?.RelatedProperties).toEqual(['#/Boot']);
  });

  it('keeps plain-text bodies (sushy-tools, Go http.Error) as the summary', () => {
    expect(parseErrorBody('Failed to save HttpBootUri field value.\n').summary).toBe(
      'Failed to save HttpBootUri field value.',
    );
    expect(parseErrorBody('').summary).toBe('');
  });

  it('maps statuses to codes and keeps MessageIds', () => {
    const e = httpError(
      412,
      'PATCH',
      '/x',
      '{"error":{"@Message.ExtendedInfo":[{"MessageId":"Base.1.12.PreconditionFailed"}]}}',
      [],
    );
    expect(e.code).toBe(RedfishErrorCode.Http);
    expect(e.status).toBe(412);
    expect(e.hasMessageId('PreconditionFailed')).toBe(true);
    expect(httpError(401, 'GET', '/x', '', []).code).toBe(RedfishErrorCode.Auth);
    expect(httpError(501, 'POST', '/x', 'nope', []).code).toBe(RedfishErrorCode.Unsupported);
  });

  it('scrubs secrets from error text, raw and encoded', () => {
    const e = httpError(
      400,
      'POST',
      '/s',
      `{"error":{"message":"bad login for ${encodeURIComponent('p@ss:w0rd')} and p@ss:w0rd"}}`,
      ['p@ss:w0rd'],
    );
    expect(e.message).not.toContain('p@ss:w0rd');
    expect(e.message).not.toContain('p%40ss');
    expect(e.message).toContain('[redacted]');
  });

  it('never leaves a secret of 3+ characters in scrubbed text (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.string({ minLength: 3 }), fc.string(), (a, secret, b) => {
        fc.pre(!'[redacted]'.includes(secret));
        expect(scrub(`${a}${secret}${b}`, [secret])).not.toContain(secret);
      }),
    );
  });
});

describe('header helpers', () => {
  it('parses Retry-After in seconds and as a date', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });

  it('turns weak ETags strong', () => {
    expect(strongEtag('W/"abc"')).toBe('"abc"');
    expect(strongEtag('"abc"')).toBe('"abc"');
  });
});
