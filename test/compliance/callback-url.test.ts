import { describe, expect, it } from 'vitest';
import { callbackUrlProblem as sandboxCallbackUrlProblem } from '../../sandbox/compliance/callback-url.js';
import { CALLBACK_URL_MAX_LENGTH, callbackUrlProblem } from '../../src/compliance/callback-url.js';
import { isLoopbackHost } from '../../src/http/base-url.js';

function urlOfLength(length: number): string {
  const prefix = 'https://hooks.example.com/';
  return prefix + 'a'.repeat(length - prefix.length);
}

describe('callbackUrlProblem (documented rule)', () => {
  it.each([
    'https://hooks.example.com/etims/abc',
    'https://hooks.example.com:8443/x?token=abc',
    'https://8.8.8.8/cb',
    'https://[2606:4700:4700::1111]/cb',
    'https://HOOKS.Example.COM./cb',
  ])('accepts %s', (url) => {
    expect(callbackUrlProblem(url)).toBeUndefined();
  });

  it('accepts exactly 2048 characters and refuses 2049', () => {
    expect(urlOfLength(CALLBACK_URL_MAX_LENGTH)).toHaveLength(2048);
    expect(callbackUrlProblem(urlOfLength(2048))).toBeUndefined();
    expect(callbackUrlProblem(urlOfLength(2049))).toMatch(/at most 2048/);
  });

  it.each([
    ['/relative/path', /absolute URL/],
    ['hooks.example.com/cb', /absolute URL/],
    ['http://hooks.example.com/cb', /https/],
    ['ftp://hooks.example.com/cb', /https/],
    ['https://user:secret@hooks.example.com/cb', /username or password/],
    ['https://user@hooks.example.com/cb', /username or password/],
    ['https://:secret@hooks.example.com/cb', /username or password/],
  ])('refuses %s', (url, reason) => {
    expect(callbackUrlProblem(url)).toMatch(reason);
  });

  it.each([
    'https://localhost/cb',
    'https://LOCALHOST./cb',
    'https://api.localhost/cb',
    'https://printer.local/cb',
    'https://billing.internal/cb',
    'https://router.home.arpa/cb',
    'https://intranet/cb',
    'https://127.0.0.1/cb',
    'https://127.10.20.30/cb',
    'https://0x7f.1/cb', // another spelling of 127.0.0.1
    'https://2130706433/cb', // and another
    'https://0.0.0.0/cb',
    'https://10.1.2.3/cb',
    'https://100.64.0.1/cb',
    'https://169.254.169.254/latest/meta-data',
    'https://172.16.0.1/cb',
    'https://172.31.255.255/cb',
    'https://192.168.1.1/cb',
    'https://224.0.0.1/cb',
    'https://[::1]/cb',
    'https://[::]/cb',
    'https://[fc00::1]/cb',
    'https://[fd12:3456::1]/cb',
    'https://[fe80::1]/cb',
    'https://[::ffff:10.0.0.1]/cb',
    'https://[::ffff:127.0.0.1]/cb',
  ])('refuses the non-public host in %s', (url) => {
    expect(callbackUrlProblem(url)).toMatch(/public host/);
  });

  it('keeps the edges of private ranges apart from their public neighbours', () => {
    expect(callbackUrlProblem('https://172.15.255.255/cb')).toBeUndefined();
    expect(callbackUrlProblem('https://172.32.0.0/cb')).toBeUndefined();
    expect(callbackUrlProblem('https://11.0.0.1/cb')).toBeUndefined();
    expect(callbackUrlProblem('https://192.169.0.1/cb')).toBeUndefined();
  });
});

describe('callbackUrlProblem with allowLoopback (C48)', () => {
  const options = { allowLoopback: true };

  it.each([
    'http://localhost:4000/cb',
    'https://localhost/cb',
    'http://127.0.0.1:8080/cb',
    'http://127.0.0.2/cb',
    'http://[::1]:9000/cb',
    'http://app.localhost/cb',
  ])('accepts %s', (url) => {
    expect(callbackUrlProblem(url, options)).toBeUndefined();
  });

  it('still refuses private non-loopback hosts, credentials and other schemes', () => {
    expect(callbackUrlProblem('http://192.168.1.10/cb', options)).toMatch(/https/);
    expect(callbackUrlProblem('https://10.0.0.1/cb', options)).toMatch(/public host/);
    expect(callbackUrlProblem('http://user:pw@localhost/cb', options)).toMatch(/username or password/);
    expect(callbackUrlProblem('ftp://localhost/cb', options)).toMatch(/http or https/);
    expect(callbackUrlProblem('http://hooks.example.com/cb', options)).toMatch(/https/);
  });

  it('isLoopbackHost recognises names and addresses', () => {
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('127.255.255.254')).toBe(true);
    expect(isLoopbackHost('128.0.0.1')).toBe(false);
    expect(isLoopbackHost('localhost.example.com')).toBe(false);
  });
});

/**
 * The sandbox reads the same rule on its own (sandbox/compliance/callback-url.ts, deliberately not shared), taking
 * loopback hosts as the client does with allowLoopback. Where the contract is specific the two readings must give the
 * same answer in the same words. They part only where "public host" is left open (reserved suffixes such as
 * `.test` or `.home`, documentation and benchmark address ranges, IPv4-mapped IPv6), and only schemes other than
 * http(s) on a loopback host are worded differently (the client names both schemes it would take there).
 */
describe('the sandbox reading of the callback URL rule', () => {
  it.each([
    'https://hooks.example.com/etims/abc',
    'https://8.8.8.8/cb',
    'https://[2606:4700:4700::1111]/cb',
    `https://hooks.example.com/${'a'.repeat(2049)}`,
    '/relative/path',
    'http://hooks.example.com/cb',
    'ftp://hooks.example.com/cb',
    'https://user:secret@hooks.example.com/cb',
    'http://localhost:4000/cb',
    'http://[::1]:9000/cb',
    'https://printer.local/cb',
    'https://billing.internal/cb',
    'https://intranet/cb',
    'https://10.1.2.3/cb',
    'https://169.254.169.254/latest/meta-data',
    'https://172.16.0.1/cb',
    'https://192.168.1.1/cb',
    'https://[fc00::1]/cb',
    'https://[fe80::1]/cb',
    'https://[::ffff:10.0.0.1]/cb',
  ])('agrees with the client on %s', (url) => {
    expect(sandboxCallbackUrlProblem(url)).toBe(callbackUrlProblem(url, { allowLoopback: true }));
  });
});
