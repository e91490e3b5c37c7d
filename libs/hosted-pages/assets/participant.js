/*
 * Hosted participant pages: progressive enhancement of the server-rendered markup.
 * Plain browser JavaScript (ES2020), no build step, no dependencies, no globals.
 *
 * - Drives the participant JSON API (/api/v1/decisions/<token>/...) from the page's forms.
 * - Speaks postMessage protocol version 2 to the host (window.parent in embed mode or inside an
 *   iframe, window.opener for popups), always with targetOrigin = embed_origin, never '*'. Without an
 *   embed_origin nothing is posted: dropped messages are counted and reported to .../frame_events.
 * - Fires service:deadline at T-30 s, T-15 s, T-5 s and T-0 using the server clock (view.now).
 *
 * Loaded under CommonJS (unit tests) it only exports its pure helpers and touches nothing.
 */
'use strict';

(function () {
  var PROTOCOL_VERSION = 2;
  var DEADLINE_MARKS = [30, 15, 5, 0];
  var TERMINAL = ['fulfilled', 'expired', 'revoked'];
  var PATHS = {
    standard: ['pending', 'authenticating', 'verifying', 'reviewing', 'fulfilled'],
    informed: ['pending', 'informed', 'evidenced', 'fulfilled'],
  };
  var STEP_OF_STATUS = {
    pending: 'start',
    authenticating: 'sign-in',
    verifying: 'verifying',
    reviewing: 'decision',
    informed: 'informed',
    evidenced: 'decision',
    fulfilled: 'done',
    expired: 'done',
    revoked: 'done',
  };
  var STEP_NAME_KEY = {
    start: 'step_name_start',
    'sign-in': 'step_name_sign_in',
    verifying: 'step_name_verifying',
    informed: 'step_name_informed',
    decision: 'step_name_decision',
    done: 'step_name_done',
  };

  /* ----------------------------------------------------------------------------------------------
   * Pure helpers (exported for unit tests)
   * -------------------------------------------------------------------------------------------- */

  function uuidV4(cryptoObj) {
    var c = cryptoObj || (typeof crypto !== 'undefined' ? crypto : null);
    if (c && typeof c.randomUUID === 'function') return c.randomUUID();
    // Insecure contexts have no randomUUID, but getRandomValues is always there.
    var b = new Uint8Array(16);
    c.getRandomValues(b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    var h = [];
    for (var i = 0; i < 16; i++) h.push((b[i] + 0x100).toString(16).slice(1));
    return h.slice(0, 4).join('') + '-' + h.slice(4, 6).join('') + '-' + h.slice(6, 8).join('') + '-' + h.slice(8, 10).join('') + '-' + h.slice(10).join('');
  }

  /** ISO 8601 UTC (`…Z`) of a date-like value, or null. */
  function isoUtc(value) {
    if (value === null || value === undefined || value === '') return null;
    var d = new Date(value);
    return isNaN(d.getTime()) ? null : d.toISOString();
  }

  /** The six-field envelope. `nowMs` is the (server-corrected) emission time. */
  function buildEnvelope(type, kind, payload, nowMs, id) {
    return {
      type: type,
      kind: kind,
      version: PROTOCOL_VERSION,
      payload: payload,
      ts: new Date(nowMs === undefined ? Date.now() : nowMs).toISOString(),
      message_id: id || uuidV4(),
    };
  }

  /** step_index (0-based position of `to` on the path) and total_steps. */
  function stepPosition(path, from, to) {
    var steps = PATHS[path] || PATHS.standard;
    var index = steps.indexOf(to);
    if (index < 0) index = steps.indexOf(from);
    if (index < 0) index = from === 'revoked' || from === 'expired' ? steps.length - 1 : 0;
    return { step_index: index, total_steps: steps.length };
  }

  /** The service:state payload of a transition for a kind. */
  function statePayload(kind, path, from, to, extra) {
    var position = stepPosition(path, from, to);
    if (kind === 'approval') {
      var kindPayload = { step_index: position.step_index, total_steps: position.total_steps };
      if (extra && extra.action) kindPayload.action = extra.action;
      if (extra && extra.trigger) kindPayload.trigger = extra.trigger;
      return { from: from, to: to, kind_payload: kindPayload };
    }
    return { from: from, to: to, step_index: position.step_index, total_steps: position.total_steps };
  }

  /**
   * The deadline mark due now, given the remaining milliseconds and the marks already fired
   * (an object used as a set, updated). Marks passed together fire once, as the latest of them.
   */
  function dueDeadlineMark(remainingMs, fired) {
    var due = null;
    for (var i = 0; i < DEADLINE_MARKS.length; i++) {
      var mark = DEADLINE_MARKS[i];
      if (remainingMs <= mark * 1000 && !fired[mark]) {
        fired[mark] = true;
        due = mark;
      }
    }
    return due;
  }

  function deadlinePayload(mark, deadlineAt) {
    return { remaining_seconds: mark, level: mark === 0 ? 'expired' : 'warning', deadline_at: isoUtc(deadlineAt) };
  }

  /** `m:ss` (or `h:mm:ss`) of a remaining time. */
  function formatRemaining(ms) {
    var total = Math.max(0, Math.ceil(ms / 1000));
    var h = Math.floor(total / 3600);
    var m = Math.floor((total % 3600) / 60);
    var s = total % 60;
    var ss = (s < 10 ? '0' : '') + s;
    if (h > 0) return h + ':' + (m < 10 ? '0' : '') + m + ':' + ss;
    return m + ':' + ss;
  }

  /** A usable postMessage target origin (`scheme://host[:port]`, normalized), or null. */
  function validOrigin(value) {
    if (typeof value !== 'string' || value === '' || value === '*' || value === 'null') return null;
    try {
      var url = new URL(value);
      if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
      if ((url.pathname && url.pathname !== '/') || url.search || url.hash || url.username || url.password) return null;
      return url.origin;
    } catch (e) {
      return null;
    }
  }

  /** An http(s) URL or null. */
  function safeHttpUrl(value) {
    if (typeof value !== 'string' || value === '') return null;
    try {
      var url = new URL(value, typeof location !== 'undefined' ? location.href : undefined);
      return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
    } catch (e) {
      return null;
    }
  }

  /** `redirect_uri` with `error=access_denied` (decline or cancel in redirect mode). */
  function accessDeniedUrl(redirectUri) {
    var safe = safeHttpUrl(redirectUri);
    if (!safe) return null;
    var url = new URL(safe);
    url.searchParams.set('error', 'access_denied');
    return url.href;
  }

  function format(template, vars) {
    return String(template || '').replace(/\{([a-z_]+)\}/g, function (whole, name) {
      return vars && Object.prototype.hasOwnProperty.call(vars, name) ? String(vars[name]) : whole;
    });
  }

  /** service:error payload and the message key shown to the person for an API error. */
  function classifyError(error) {
    var status = error && typeof error.status === 'number' ? error.status : 0;
    var code = (error && error.code) || (status === 0 ? 'network_error' : 'http_' + status);
    var info = { code: code, fatal: false, recoverable_via: 'retry', messageKey: 'error_server' };
    if (status === 0) info.messageKey = 'error_network';
    else if (status === 429) info.messageKey = 'error_rate_limited';
    else if (status === 400 || status === 422) {
      info.recoverable_via = 'user_input';
      info.messageKey = 'error_invalid';
    } else if (status === 401 || status === 403) {
      info.recoverable_via = 'sign_in';
      info.messageKey = 'error_unauthorized';
    } else if (status === 409) {
      info.recoverable_via = 'reload';
      info.messageKey = 'error_conflict';
    } else if (status === 404) {
      info.fatal = true;
      info.recoverable_via = null;
      info.messageKey = 'error_not_found';
    } else if (status === 410) {
      info.fatal = true;
      info.recoverable_via = null;
      info.messageKey = 'error_expired';
    } else if (status === 421) {
      info.fatal = true;
      info.recoverable_via = null;
      info.messageKey = 'error_wrong_country';
    }
    if (/expired/.test(code) && status !== 0) {
      info.fatal = true;
      info.recoverable_via = null;
      info.messageKey = 'error_expired';
    }
    return info;
  }

  var helpers = {
    PROTOCOL_VERSION: PROTOCOL_VERSION,
    DEADLINE_MARKS: DEADLINE_MARKS,
    PATHS: PATHS,
    uuidV4: uuidV4,
    isoUtc: isoUtc,
    buildEnvelope: buildEnvelope,
    stepPosition: stepPosition,
    statePayload: statePayload,
    dueDeadlineMark: dueDeadlineMark,
    deadlinePayload: deadlinePayload,
    formatRemaining: formatRemaining,
    validOrigin: validOrigin,
    accessDeniedUrl: accessDeniedUrl,
    classifyError: classifyError,
    format: format,
  };

  if (typeof module === 'object' && module && typeof module.exports === 'object') {
    module.exports = helpers;
    return;
  }
  if (typeof document === 'undefined') return;

  /* ----------------------------------------------------------------------------------------------
   * Page
   * -------------------------------------------------------------------------------------------- */

  function $(id) {
    return document.getElementById(id);
  }

  function readJson(id) {
    var el = $(id);
    if (!el) return null;
    try {
      return JSON.parse(el.textContent || 'null');
    } catch (e) {
      return null;
    }
  }

  function localizeTimes(intlLocale) {
    var nodes = document.querySelectorAll('time[data-local-time]');
    if (!nodes.length || typeof Intl === 'undefined') return;
    var formatter;
    try {
      formatter = new Intl.DateTimeFormat(intlLocale || document.documentElement.lang || undefined, { dateStyle: 'medium', timeStyle: 'short' });
    } catch (e) {
      return;
    }
    for (var i = 0; i < nodes.length; i++) {
      var d = new Date(nodes[i].getAttribute('datetime'));
      if (!isNaN(d.getTime())) nodes[i].textContent = formatter.format(d);
    }
  }

  function start() {
    var openForm = $('flow-open-form');
    if (openForm) return openFlow(openForm);
    var config = readJson('decision-config') || {};
    localizeTimes(config.intl_locale);
    var initialView = readJson('decision-view');
    var root = $('decision-root');
    if (!initialView || !root) return guardPostForms(); // inbox, records, error and notice pages
    runDecisionPage(initialView, config, root);
  }

  /*
   * The hosted flow page: its form opens the session, sent at once. A navigation started while the
   * page loads takes the page's place in the history, so Back does not open another session.
   */
  function openFlow(form) {
    if (form.getAttribute('data-auto-submit') === 'true') form.submit();
  }

  /*
   * The plain forms of the inbox and records pages post once: a second click while the first is on
   * its way would be answered for a state the first has already changed (a withdrawal shown as
   * "nothing was withdrawn"). A page shown again from the history takes posts again.
   */
  function guardPostForms() {
    document.addEventListener(
      'submit',
      function (event) {
        var form = event.target;
        if (!form || String(form.method).toLowerCase() !== 'post') return;
        if (form.getAttribute('data-posting') === 'true') {
          event.preventDefault();
          return;
        }
        form.setAttribute('data-posting', 'true');
        form.setAttribute('aria-busy', 'true');
      },
      true,
    );
    window.addEventListener('pageshow', function () {
      var posting = document.querySelectorAll('form[data-posting]');
      for (var i = 0; i < posting.length; i++) {
        posting[i].removeAttribute('data-posting');
        posting[i].removeAttribute('aria-busy');
      }
    });
  }

  function runDecisionPage(initialView, config, root) {
    var view = initialView;
    var messages = config.messages || {};
    var mode = config.mode === 'embed' ? 'embed' : 'page';
    var apiBase = typeof config.api_base === 'string' ? config.api_base : '';
    var token = view.session_token;
    var kind = view.kind === 'approval' ? 'approval' : 'consent';
    var path = view.path === 'informed' ? 'informed' : 'standard';
    var status = view.status;
    var skew = 0; // server clock minus local clock (ms)
    var busy = false;
    var finished = TERMINAL.indexOf(status) >= 0 || !!view.outcome;
    var email = null;
    var lastSubmitter = null;

    function t(key, vars) {
      return format(messages[key] || key, vars);
    }

    function syncClock(serverNow) {
      var ms = Date.parse(serverNow);
      if (!isNaN(ms)) skew = ms - Date.now();
    }
    function serverNow() {
      return Date.now() + skew;
    }
    syncClock(view.now);

    /* ---------------------------------------------------------------- host channel (postMessage) */

    var inFrame = false;
    try {
      inFrame = window.parent !== window;
    } catch (e) {
      inFrame = true;
    }
    var target = null;
    var channelActive = false;
    if (mode === 'embed' || inFrame) {
      channelActive = true;
      target = inFrame ? window.parent : null;
    } else if (view.delivery_mode === 'popup' && window.opener && !window.opener.closed) {
      channelActive = true;
      target = window.opener;
    }
    var origin = validOrigin(view.embed_origin);
    var dropped = 0;
    var flushTimer = null;
    var framesUrl = apiUrl('/frame_events');

    function post(type, payload) {
      if (!channelActive) return;
      if (!origin) {
        dropped += 1;
        if (!flushTimer) flushTimer = setTimeout(flushDropped, 1000);
        return;
      }
      if (!target) return;
      try {
        target.postMessage(buildEnvelope(type, kind, payload, serverNow()), origin);
      } catch (e) {
        /* a closed opener or a detached parent: nothing to tell */
      }
    }

    function dropReport(count) {
      return JSON.stringify({ type: 'postmessage_dropped', reason: 'origin_missing', count: count });
    }

    function flushDropped() {
      flushTimer = null;
      if (dropped <= 0) return;
      var count = dropped;
      dropped = 0;
      fetch(framesUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: dropReport(count),
        credentials: 'same-origin',
        keepalive: true,
      }).catch(function () {
        dropped += count;
      });
    }

    function beaconDropped() {
      if (flushTimer) {
        clearTimeout(flushTimer);
        flushTimer = null;
      }
      if (dropped <= 0) return;
      var count = dropped;
      dropped = 0;
      var sent = false;
      try {
        sent = !!(navigator.sendBeacon && navigator.sendBeacon(framesUrl, new Blob([dropReport(count)], { type: 'application/json' })));
      } catch (e) {
        sent = false;
      }
      if (!sent) {
        dropped = count;
        flushDropped();
      }
    }
    window.addEventListener('pagehide', beaconDropped);
    document.addEventListener('visibilitychange', function () {
      if (document.visibilityState === 'hidden') beaconDropped();
    });

    if (channelActive && origin) {
      window.addEventListener('message', function (event) {
        if (event.origin !== origin) return;
        var data = event.data;
        if (!data || typeof data !== 'object' || data.version !== PROTOCOL_VERSION || data.type !== 'service:cancel') return;
        var reason = data.payload && typeof data.payload.reason === 'string' && data.payload.reason ? data.payload.reason : 'host_cancelled';
        cancel(reason, 'host');
      });
    }

    /* ---------------------------------------------------------------------------- API requests */

    function apiUrl(suffix) {
      return apiBase + '/api/v1/decisions/' + encodeURIComponent(token) + suffix;
    }

    /*
     * The participant proof: signing in answers it, and the steps after sign-in send it, so that
     * only this browser decides (the organisation holds the session token too). Kept for the tab
     * (a reload keeps it); a browser without it signs in again (`resigning`) for a new one.
     */
    var PROOF_KEY = 'service-proof:' + token;
    var proof = readProof();
    var resigning = false;

    function readProof() {
      try {
        return window.sessionStorage.getItem(PROOF_KEY) || null;
      } catch (e) {
        return null;
      }
    }

    function keepProof(value) {
      proof = value;
      try {
        window.sessionStorage.setItem(PROOF_KEY, value);
      } catch (e) {
        /* storage refused (a sandboxed frame): kept for this page only */
      }
    }

    function isProofRefusal(error) {
      return error && error.status === 403 && (error.details || []).some(function (d) {
        return d && d.field === 'X-Participant-Proof';
      });
    }

    /** Signed in elsewhere (or the proof was lost): the sign-in step again, for a proof of this browser. */
    function signInAgain() {
      resigning = true;
      render(true);
      showCodeForm(false);
      announce(t('sign_in_again'));
    }

    function request(method, suffix, body) {
      var init = { method: method, headers: { Accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' };
      if (proof) init.headers['X-Participant-Proof'] = proof;
      if (body !== undefined) {
        init.headers['Content-Type'] = 'application/json';
        init.body = JSON.stringify(body);
      }
      return fetch(apiUrl(suffix), init).then(
        function (response) {
          return response.text().then(function (text) {
            var data = null;
            if (text) {
              try {
                data = JSON.parse(text);
              } catch (e) {
                data = null;
              }
            }
            if (!response.ok) {
              var err = new Error((data && data.message) || 'HTTP ' + response.status);
              err.status = response.status;
              err.code = data && data.code;
              err.details = data && Array.isArray(data.details) ? data.details : [];
              err.requestId = data && data.request_id;
              err.serverMessage = data && data.message;
              err.homeCountry = data && typeof data.home_country === 'string' ? data.home_country : null;
              throw err;
            }
            return data;
          });
        },
        function () {
          var err = new Error('network error');
          err.status = 0;
          err.code = 'network_error';
          err.details = [];
          throw err;
        },
      );
    }

    /* ------------------------------------------------------------------------------- rendering */

    /**
     * What the notice in the status region is about when it is about one part of the page only
     * (`code`: the code was sent, which means something only where the code is entered), else null
     * (a deadline warning: the whole decision). endNotice() takes such a notice away when its part goes.
     */
    var noticeAbout = null;
    var noticeTimer = null;

    function announce(text, about) {
      var region = $('status-message');
      if (!region) return;
      clearTimeout(noticeTimer);
      region.textContent = '';
      noticeAbout = about || null;
      // The code notice and a field's error are shown where they belong already: the status region
      // then only speaks them, not shows them twice.
      if (region.classList) region.classList.toggle('hp-visually-hidden', about === 'code' || about === 'field');
      // A fresh text node after clearing makes screen readers announce repeated messages too.
      noticeTimer = setTimeout(function () {
        noticeTimer = null;
        region.textContent = text;
      }, 50);
    }

    /** Clears the status region if its notice is about `about` (also one still to be shown). */
    function endNotice(about) {
      if (noticeAbout !== about) return;
      clearTimeout(noticeTimer);
      noticeTimer = null;
      noticeAbout = null;
      var region = $('status-message');
      if (region) region.textContent = '';
    }

    function clearErrors() {
      var region = $('error-message');
      if (region) region.textContent = '';
      endNotice('field');
      var fieldErrors = document.querySelectorAll('[data-error-for]');
      for (var i = 0; i < fieldErrors.length; i++) {
        var forId = fieldErrors[i].getAttribute('data-error-for');
        fieldErrors[i].textContent = '';
        var control = $(forId);
        if (control) {
          control.removeAttribute('aria-invalid');
          setDescribedBy(control, fieldErrors[i].id, false);
        }
      }
    }

    function setDescribedBy(control, id, present) {
      var ids = (control.getAttribute('aria-describedby') || '').split(/\s+/).filter(function (x) {
        return x && x !== id;
      });
      if (present) ids.push(id);
      if (ids.length) control.setAttribute('aria-describedby', ids.join(' '));
      else control.removeAttribute('aria-describedby');
    }

    /** Marks a field invalid, links its message with aria-describedby and focuses it. */
    function fieldError(controlId, text, focus) {
      var control = $(controlId);
      var holder = $(controlId + '-error');
      if (!control || !holder) {
        showError(text);
        return;
      }
      holder.textContent = t('error_prefix') + ' ' + text;
      if (/^(INPUT|TEXTAREA|SELECT)$/.test(control.tagName)) control.setAttribute('aria-invalid', 'true');
      setDescribedBy(control, holder.id, true);
      if (control.tagName === 'FIELDSET') {
        // A fieldset takes no focus: its first control does, and the status region speaks the message.
        var first = control.querySelector('input:not([disabled]), textarea:not([disabled]), select:not([disabled])');
        if (focus !== false && first) first.focus();
        announce(holder.textContent, 'field');
        return;
      }
      if (focus !== false) control.focus();
    }

    /** A general error in the alert region (announced; text, not colour, says it is an error). */
    function showError(text, detail, requestId) {
      var region = $('error-message');
      if (!region) return;
      region.textContent = '';
      var p = document.createElement('p');
      var strong = document.createElement('strong');
      strong.className = 'hp-error-title';
      strong.textContent = t('error_prefix');
      p.appendChild(strong);
      p.appendChild(document.createTextNode(' ' + text));
      region.appendChild(p);
      if (detail) {
        var d = document.createElement('p');
        d.textContent = t('error_details', { message: detail });
        region.appendChild(d);
      }
      if (requestId) {
        var r = document.createElement('p');
        r.className = 'hp-hint';
        r.textContent = t('error_reference', { id: requestId });
        region.appendChild(r);
      }
    }

    function purposeBox(key) {
      var boxes = root.querySelectorAll('input[name="purposes"]');
      for (var i = 0; i < boxes.length; i++) if (boxes[i].value === key) return boxes[i];
      return null;
    }

    /** Whether the page is in English, the language of the service's own error texts. */
    function pageInEnglish() {
      return /^en\b/i.test(document.documentElement.lang || 'en');
    }

    /**
     * What a person is told about a field the service refused: the page's own words (a rejected code
     * has its message); the service's reason, written for developers in English, only on an English
     * page where no message of the page's own fits.
     */
    function fieldText(controlId, reason, info) {
      if (controlId === 'sign-in-code') return t('error_code_rejected');
      if (controlId === 'purposes' || /^purpose-/.test(controlId)) return t('error_purposes_invalid');
      return reason && pageInEnglish() ? reason : t(info.messageKey);
    }

    /** The region's name in the page's language (a country code when the browser cannot name it). */
    function regionName(code) {
      try {
        return new Intl.DisplayNames([config.intl_locale || document.documentElement.lang || 'en'], { type: 'region' }).of(code) || code;
      } catch (e) {
        return code;
      }
    }

    /** Shows an API error, maps field details, tells the host. */
    function handleApiError(error, fieldMap) {
      var info = classifyError(error);
      if (isProofRefusal(error)) {
        signInAgain();
        return info;
      }
      if (error.status === 421 && error.homeCountry) return wrongCountry(error, info);
      var mapped = false;
      var details = error.details || [];
      for (var i = 0; i < details.length && fieldMap; i++) {
        var field = String(details[i].field || '');
        var purposeMatch = /^(?:purposes|decisions)\.(.+)$/.exec(field);
        var box = purposeMatch ? purposeBox(purposeMatch[1]) : null;
        if (box) {
          fieldError(box.id, fieldText(box.id, details[i].reason, info), !mapped);
          mapped = true;
          continue;
        }
        for (var prefix in fieldMap) {
          if (field === prefix || field.indexOf(prefix + '.') === 0) {
            fieldError(fieldMap[prefix], fieldText(fieldMap[prefix], details[i].reason, info), !mapped);
            mapped = true;
          }
        }
      }
      // The service's own message (English, for developers) as details on an English page only; the reference everywhere.
      if (!mapped) showError(t(info.messageKey), pageInEnglish() ? error.serverMessage : null, error.requestId);
      post('service:error', {
        code: String(info.code),
        message: error.serverMessage || t(info.messageKey),
        fatal: info.fatal,
        recoverable_via: info.recoverable_via,
      });
      if (info.fatal) {
        setControlsDisabled(true);
        refreshView();
      }
      return info;
    }

    /**
     * The person is homed in another country: this session cannot take their decision (their data
     * stays there). They are told so in their language, with what to do, instead of a link that loops;
     * the host learns the home country (a status, no personal data) to open the request there.
     */
    function wrongCountry(error, info) {
      var country = String(error.homeCountry).toUpperCase();
      showError(t('error_wrong_country_person', { country: regionName(country), application: (view.application && view.application.name) || '' }), null, error.requestId);
      post('service:error', {
        code: 'wrong_country',
        message: "The person's home country is " + country + ': open the decision at that country\'s endpoint',
        fatal: true,
        recoverable_via: null,
      });
      setControlsDisabled(true);
      return info;
    }

    var focusBeforeBusy = null;
    function setBusy(on) {
      busy = on;
      root.setAttribute('aria-busy', on ? 'true' : 'false');
      if (on) focusBeforeBusy = document.activeElement;
      setControlsDisabled(on);
      if (!on) {
        // Disabling the pressed button dropped focus to <body>: put it back.
        var el = focusBeforeBusy;
        focusBeforeBusy = null;
        if (el && el !== document.body && el.isConnected && (!document.activeElement || document.activeElement === document.body)) {
          try {
            el.focus();
          } catch (e) {
            /* ignore */
          }
        }
      }
    }

    function setControlsDisabled(on) {
      var controls = root.querySelectorAll('button, input, textarea, select');
      for (var i = 0; i < controls.length; i++) {
        if (on) {
          if (!controls[i].disabled) {
            controls[i].disabled = true;
            controls[i].setAttribute('data-hp-disabled', 'true');
          }
        } else if (controls[i].getAttribute('data-hp-disabled') === 'true') {
          controls[i].disabled = false;
          controls[i].removeAttribute('data-hp-disabled');
        }
      }
    }

    var renderedStep = null;
    function stepFor(st) {
      if (finished) return 'done';
      return resigning ? 'sign-in' : STEP_OF_STATUS[st] || 'start';
    }

    function updateProgress(step) {
      var el = $('step-progress');
      if (!el) return;
      var steps = PATHS[path];
      var index = steps.indexOf(status);
      if (step === 'done' || index < 0) {
        el.hidden = true;
        return;
      }
      el.textContent = t('step_progress', { current: index + 1, total: steps.length, name: t(STEP_NAME_KEY[step]) });
      el.hidden = false;
    }

    /** Shows the section of the current status; moves focus to its heading when asked. */
    function render(moveFocus) {
      var step = stepFor(status);
      root.setAttribute('data-status', status);
      root.setAttribute('data-step', step);
      var sections = root.querySelectorAll('section[data-step]');
      for (var i = 0; i < sections.length; i++) sections[i].hidden = sections[i].getAttribute('data-step') !== step;
      var cancelArea = $('cancel-area');
      if (cancelArea) cancelArea.hidden = step === 'done';
      var deadlineEl = $('deadline');
      if (deadlineEl && step === 'done') deadlineEl.hidden = true;
      if (step === 'sign-in' && renderedStep !== 'sign-in') showCodeForm(false);
      // "We sent a code" belongs to the code form: the steps after it (verifying, the review) do not show it.
      if (step !== 'sign-in') endNotice('code');
      if (step === 'decision' && view.signed_in && view.signed_in.email_hint && $('signed-in-as')) {
        $('signed-in-as').textContent = t('signed_in_as', { email: view.signed_in.email_hint });
        $('signed-in-as').hidden = false;
      }
      renderedStep = step;
      updateProgress(step);
      if (moveFocus) {
        var heading = $('step-' + step + '-title');
        if (heading) heading.focus();
      }
    }

    function showCodeForm(show) {
      var signIn = $('sign-in-form');
      var code = $('code-form');
      if (!signIn || !code) return;
      signIn.hidden = show;
      code.hidden = !show;
      if (!show) endNotice('code');
    }

    /** Takes a fresh view from the server; emits service:state and re-renders on a status change. */
    function applyView(next, moveFocus) {
      if (!next || typeof next !== 'object' || !next.status) return;
      var from = status;
      view = next;
      if (next.now) syncClock(next.now);
      status = next.status;
      if (next.outcome || TERMINAL.indexOf(status) >= 0) finished = true;
      if (from !== status) {
        post('service:state', statePayload(kind, path, from, status, view.approval || null));
        if (finished) fillDone(doneVariant());
      }
      render(moveFocus !== false && from !== status);
      if (finished) stopCountdown();
    }

    function refreshView() {
      return request('GET', '').then(
        function (next) {
          applyView(next, true);
          return next;
        },
        function () {
          return null;
        },
      );
    }

    var doneOverride = null;
    function doneVariant() {
      if (doneOverride) return doneOverride;
      if (view.outcome) return view.outcome;
      if (status === 'expired' || status === 'revoked') return status;
      return 'fulfilled';
    }

    function fillDone(variant) {
      var titleKey = 'done_title_recorded';
      if (variant === 'expired' || variant === 'deadline') titleKey = 'done_title_expired';
      else if (variant === 'revoked') titleKey = 'done_title_revoked';
      else if (variant === 'cancelled' || variant === 'host_cancelled') titleKey = 'done_title_cancelled';
      var section = $('step-done');
      if (section) section.setAttribute('data-variant', variant);
      root.setAttribute('data-outcome', view.outcome || '');
      if ($('step-done-title')) $('step-done-title').textContent = t(titleKey);
      if ($('done-message')) $('done-message').textContent = t('done_' + variant, { application: (view.application && view.application.name) || '' });
      var extra = $('done-extra');
      if (extra && mode === 'page' && view.delivery_mode === 'popup' && window.opener) {
        extra.textContent = t('done_close_popup');
        extra.hidden = false;
      }
    }

    function finish(variant) {
      finished = true;
      doneOverride = variant || null;
      fillDone(doneVariant());
      render(true);
      stopCountdown();
    }

    function navigateAway(url) {
      var safe = safeHttpUrl(url);
      if (!safe || mode !== 'page' || view.delivery_mode !== 'redirect') return;
      var holder = $('done-redirect');
      var link = $('redirect-link');
      var name = (view.application && view.application.name) || '';
      if (holder && link) {
        link.href = safe;
        link.textContent = t('redirect_link', { application: name });
        holder.hidden = false;
      }
      announce(t('redirect_notice', { application: name }));
      window.location.assign(safe);
    }

    /* ------------------------------------------------------------------------------- actions */

    function transition(to, extra, fieldMap) {
      var body = { to: to };
      if (extra) for (var k in extra) body[k] = extra[k];
      clearErrors();
      setBusy(true);
      return request('POST', '/transitions', body).then(
        function (next) {
          setBusy(false);
          if (next && next.participant_proof) keepProof(next.participant_proof);
          applyView(next, true);
          return next;
        },
        function (error) {
          setBusy(false);
          handleApiError(error, fieldMap);
          throw error;
        },
      );
    }

    function sendCode(address, resend) {
      clearErrors();
      setBusy(true);
      var begin = status === 'pending' ? request('POST', '/transitions', { to: 'authenticating' }).then(function (next) {
        applyView(next, false);
      }) : Promise.resolve();
      return begin
        .then(function () {
          // The code's mail in the language the page is shown in.
          var lang = /^[a-z]{2}(-[A-Z]{2})?$/.test(document.documentElement.lang || '') ? document.documentElement.lang : null;
          return request('POST', '/sign_in', lang ? { email: address, locale: lang } : { email: address });
        })
        .then(
          function () {
            setBusy(false);
            email = address;
            var sent = $('code-sent-message');
            var text = t(resend ? 'code_resent' : 'code_sent', { email: address });
            if (sent) sent.textContent = text;
            showCodeForm(true);
            announce(text, 'code');
            var code = $('sign-in-code');
            if (code) {
              code.value = '';
              code.focus();
            }
          },
          function (error) {
            setBusy(false);
            handleApiError(error, { email: 'sign-in-email' });
          },
        );
    }

    /** Signing in again on a session signed in to already: the code buys this browser a new proof. */
    function proveAgain(code) {
      clearErrors();
      setBusy(true);
      return request('POST', '/proof', { email: email, code: code }).then(
        function (answer) {
          setBusy(false);
          keepProof(answer.participant_proof);
          resigning = false;
          if (status === 'verifying') return transition('reviewing');
          render(true);
          return null;
        },
        function (error) {
          setBusy(false);
          handleApiError(error, { code: 'sign-in-code', email: 'sign-in-email' });
        },
      );
    }

    function verifyCode(code) {
      if (resigning) return proveAgain(code);
      return transition('verifying', { email: email, code: code }, { code: 'sign-in-code', email: 'sign-in-email' })
        .then(function () {
          if (status === 'verifying') return transition('reviewing');
          return null;
        })
        .catch(function (error) {
          if (error && (error.status === 400 || error.status === 401 || error.status === 422) && status === 'authenticating') {
            if (!(error.details && error.details.some(function (d) { return d && (d.field === 'code' || d.field === 'email'); }))) {
              // Replace the general alert with the field message for a rejected code.
              var region = $('error-message');
              if (region) region.textContent = '';
              fieldError('sign-in-code', t('error_code_rejected'));
            }
          }
        });
    }

    function complete(body) {
      clearErrors();
      setBusy(true);
      return request('POST', '/complete', body).then(
        function (result) {
          result = result || {};
          return request('GET', '')
            .then(
              function (next) {
                return next;
              },
              function () {
                return null;
              },
            )
            .then(function (next) {
              setBusy(false);
              var outcome = result.outcome || body.outcome;
              if (next) applyView(next, false);
              if (!view.outcome) view.outcome = outcome;
              post('service:complete', {
                outcome: outcome,
                exchange_token: result.exchange_token,
                completed_at: isoUtc(result.completed_at) || new Date(serverNow()).toISOString(),
              });
              finish(outcome);
              if (result.redirect_to) navigateAway(result.redirect_to);
            });
        },
        function (error) {
          setBusy(false);
          handleApiError(error, { purposes: 'purposes', decisions: 'purposes', counter: 'counter-note', 'counter.note': 'counter-note' });
        },
      );
    }

    function cancel(reason, by) {
      if (finished) return Promise.resolve();
      clearErrors();
      setBusy(true);
      return request('POST', '/cancel', by === 'host' ? { reason: reason, cancelled_by: 'host' } : { reason: reason }).then(
        function (next) {
          setBusy(false);
          applyView(next, false);
          post('service:cancel', { reason: reason, cancelled_by: by });
          finish(by === 'host' ? 'host_cancelled' : 'cancelled');
          if (by === 'user') navigateAway(accessDeniedUrl(view.redirect_uri));
        },
        function (error) {
          setBusy(false);
          handleApiError(error);
        },
      );
    }

    /* ------------------------------------------------------------------------------ countdown */

    var countdownTimer = null;
    function stopCountdown() {
      if (countdownTimer) {
        clearInterval(countdownTimer);
        countdownTimer = null;
      }
    }

    function startCountdown() {
      var deadlineAt = isoUtc(view.deadline_at);
      if (!deadlineAt || finished) return;
      var deadlineMs = Date.parse(deadlineAt);
      var fired = {};
      var remainingEl = $('deadline-remaining');
      var lastText = '';
      function tick() {
        var remaining = deadlineMs - serverNow();
        if (remainingEl) {
          var text = t('time_left', { time: formatRemaining(remaining) });
          if (text !== lastText) remainingEl.textContent = lastText = text;
        }
        var mark = dueDeadlineMark(remaining, fired);
        if (mark !== null) {
          post('service:deadline', deadlinePayload(mark, deadlineAt));
          announce(mark === 0 ? t('deadline_expired') : t('deadline_warning', { seconds: mark }));
        }
        if (remaining <= 0) {
          stopCountdown();
          setControlsDisabled(true);
          request('GET', '').then(
            function (next) {
              applyView(next, false);
              if (!finished) finish('deadline');
              else render(true);
            },
            function () {
              finish('deadline');
            },
          );
        }
      }
      tick();
      if (!finished) countdownTimer = setInterval(tick, 250);
    }

    /* --------------------------------------------------------------------------------- resize */

    function startResize() {
      if (!channelActive || typeof ResizeObserver === 'undefined') return;
      var last = -1;
      var scheduled = false;
      function measure() {
        scheduled = false;
        var height = Math.ceil(document.documentElement.getBoundingClientRect().height);
        if (height !== last && height >= 0) {
          last = height;
          post('service:resize', { height: height });
        }
      }
      var observer = new ResizeObserver(function () {
        if (scheduled) return;
        scheduled = true;
        requestAnimationFrame(measure);
      });
      observer.observe(document.documentElement);
      observer.observe(document.body);
    }

    /* ---------------------------------------------------------------------------------- wiring */

    function on(id, event, handler) {
      var el = $(id);
      if (el) el.addEventListener(event, handler);
    }

    function submitterOf(event) {
      return event.submitter || lastSubmitter;
    }

    root.addEventListener('click', function (event) {
      var button = event.target && event.target.closest ? event.target.closest('button[type="submit"]') : null;
      if (button) lastSubmitter = button;
    });

    on('start-button', 'click', function () {
      if (busy) return;
      transition(path === 'informed' ? 'informed' : 'authenticating').catch(function () {});
    });

    on('sign-in-form', 'submit', function (event) {
      event.preventDefault();
      if (busy) return;
      clearErrors();
      var input = $('sign-in-email');
      var value = input ? input.value.trim() : '';
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) {
        fieldError('sign-in-email', t('error_email_invalid'));
        return;
      }
      sendCode(value, false);
    });

    on('code-form', 'submit', function (event) {
      event.preventDefault();
      if (busy) return;
      clearErrors();
      var input = $('sign-in-code');
      var value = input ? input.value.replace(/\s+/g, '') : '';
      if (!/^\d{6,8}$/.test(value)) {
        fieldError('sign-in-code', t('error_code_invalid'));
        return;
      }
      verifyCode(value);
    });

    on('code-resend', 'click', function () {
      if (busy || !email) return;
      sendCode(email, true);
    });

    on('sign-in-restart', 'click', function () {
      clearErrors();
      showCodeForm(false);
      var input = $('sign-in-email');
      if (input) input.focus();
    });

    on('verify-continue', 'click', function () {
      if (busy) return;
      transition('reviewing').catch(function () {});
    });

    on('informed-form', 'submit', function (event) {
      event.preventDefault();
      if (busy) return;
      clearErrors();
      var ack = $('informed-ack');
      if (ack && !ack.checked) {
        fieldError('informed-ack', t('informed_ack_required'));
        return;
      }
      transition('evidenced').catch(function () {});
    });

    on('consent-form', 'submit', function (event) {
      event.preventDefault();
      if (busy) return;
      clearErrors();
      var button = submitterOf(event);
      var outcome = button && button.value === 'declined' ? 'declined' : 'granted';
      var boxes = root.querySelectorAll('#consent-form input[name="purposes"]');
      if (outcome === 'declined') {
        // Declining keeps what the person did to the right-to-object boxes: an unticked one is an objection.
        var stated = {};
        for (var k = 0; k < boxes.length; k++) stated[boxes[k].value] = !!boxes[k].checked;
        complete(boxes.length ? { outcome: 'declined', purposes: stated } : { outcome: 'declined' });
        return;
      }
      var purposes = {};
      var missing = [];
      var consentBoxes = 0;
      var consentTicked = 0;
      for (var i = 0; i < boxes.length; i++) {
        purposes[boxes[i].value] = !!boxes[i].checked;
        if (boxes[i].getAttribute('data-required') === 'true' && !boxes[i].checked) missing.push(boxes[i]);
        if (boxes[i].getAttribute('data-basis') !== 'legitimate_interest') {
          consentBoxes += 1;
          if (boxes[i].checked) consentTicked += 1;
        }
      }
      // Confirming with no consent box ticked chooses nothing: a decline, as easy as the grant, and
      // an unticked right-to-object box still records the objection.
      if (consentBoxes > 0 && consentTicked === 0) {
        complete({ outcome: 'declined', purposes: purposes });
        return;
      }
      if (missing.length) {
        for (var j = 0; j < missing.length; j++) {
          var label = root.querySelector('label[for="' + missing[j].id + '"] .hp-purpose-label');
          fieldError(missing[j].id, t('purpose_required_error', { label: label ? label.textContent : missing[j].value }), j === 0);
        }
        return;
      }
      var body = { outcome: 'granted' };
      if (boxes.length) body.purposes = purposes;
      complete(body);
    });

    on('approval-form', 'submit', function (event) {
      event.preventDefault();
      if (busy) return;
      clearErrors();
      var button = submitterOf(event);
      var outcome = button ? button.value : '';
      if (outcome === 'countered') {
        var note = $('counter-note') ? $('counter-note').value.trim() : '';
        if (!note) {
          fieldError('counter-note', t('counter_required'));
          return;
        }
        complete({ outcome: 'countered', counter: { note: note } });
      } else if (outcome === 'approved' || outcome === 'denied') {
        complete({ outcome: outcome });
      }
    });

    // A link to a new tab (the privacy policy): a frame sandboxed without allow-popups blocks the tab
    // silently, so the page opens it itself and, when it was blocked, shows the address to copy.
    root.addEventListener('click', function (event) {
      var link = event.target && event.target.closest ? event.target.closest('a[target="_blank"]') : null;
      if (!link || event.defaultPrevented || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
      event.preventDefault();
      var opened = window.open(link.href, '_blank');
      if (opened) {
        try {
          opened.opener = null;
        } catch (e) {
          /* another origin's window: nothing to clear */
        }
        return;
      }
      var note = link.parentNode && link.parentNode.querySelector('.hp-link-blocked');
      if (!note) {
        note = document.createElement('p');
        note.className = 'hp-hint hp-link-blocked';
        link.parentNode.appendChild(note);
      }
      note.textContent = t('link_blocked', { url: link.href });
    });

    on('cancel-button', 'click', function () {
      if (busy) return;
      cancel('user_cancelled', 'user');
    });

    /* ---------------------------------------------------------------------------------- start */

    if (finished) fillDone(doneVariant());
    // Signed in, but not in this tab (another device, or a new tab): the sign-in step again first.
    if (!finished && !proof && view.signed_in && (status === 'verifying' || status === 'reviewing')) resigning = true;
    render(false);
    if (resigning) announce(t('sign_in_again'));
    root.setAttribute('data-ready', 'true');
    post('service:ready', {
      kind: kind,
      session_token: token,
      deadline_at: isoUtc(view.deadline_at),
      branding: {},
      mode: view.delivery_mode || 'embed',
      // The language the page is shown in (the person's), not the flow's.
      locale: String(document.documentElement.lang || config.locale || view.locale || 'en').replace(/_/g, '-'),
    });
    startResize();
    startCountdown();
    if (status === 'verifying' && !finished && !resigning) transition('reviewing').catch(function () {});
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
