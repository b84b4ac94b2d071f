// The portal's own script: three small enhancements, loaded with <script defer>.
// Every page works without it (and without htmx); it only adds:
//
//  1. Countdown then redirect. An element with data-countdown, data-redirect-url
//     and data-seconds shows the seconds left in its [data-countdown-value] child,
//     updated every second, then goes to the URL. The page's own link or button
//     to the same URL is what works without JavaScript.
//  2. Focus after an htmx swap: to #error-summary when there is one, else to the
//     first h1 of the swapped region, so that screen readers announce the new step.
//  3. Copy buttons: a button[data-copy] (hidden in the HTML) is shown where the
//     clipboard can be written, and copies its data-copy text; the nearest
//     [data-copy-status] live region announces it and the button says
//     data-copied for a moment. Without it the values stay selectable text.
(function () {
  'use strict';

  var started = 'countdownStarted'; // data-countdown-started marks elements already running

  // safeURL returns url resolved against the page when it is http(s), else "".
  // A javascript: URL in the attribute must never run.
  function safeURL(url) {
    try {
      var u = new URL(url, window.location.href);
      return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : '';
    } catch (e) {
      return '';
    }
  }

  function startCountdown(el) {
    if (el.dataset[started]) return;
    var url = safeURL(el.getAttribute('data-redirect-url') || '');
    var raw = (el.getAttribute('data-seconds') || '').trim();
    if (!url || !/^[0-9]+$/.test(raw)) return;
    var seconds = Number(raw);
    el.dataset[started] = 'true';
    // The countdown line is hidden in the HTML: without JavaScript nothing
    // would redirect, and the Pay now link is the way on.
    el.hidden = false;

    var value = el.querySelector('[data-countdown-value]');
    var deadline = Date.now() + seconds * 1000;
    function tick() {
      // Swapped away (htmx navigated elsewhere): stop, and do not redirect.
      if (!el.isConnected) return;
      var left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
      if (value && value.textContent !== String(left)) value.textContent = String(left);
      if (left === 0) {
        window.location.assign(url);
        return;
      }
      // Wake at the next whole second, so the display does not drift.
      window.setTimeout(tick, ((deadline - Date.now()) % 1000) || 1000);
    }
    tick();
  }

  var countdownSelector = '[data-countdown][data-redirect-url][data-seconds]';

  function startCountdowns(root) {
    if (root.matches && root.matches(countdownSelector)) startCountdown(root);
    var els = root.querySelectorAll(countdownSelector);
    for (var i = 0; i < els.length; i++) startCountdown(els[i]);
  }

  function focusTarget(region) {
    var summary = document.getElementById('error-summary');
    if (summary) return summary;
    if (region.matches && region.matches('h1')) return region;
    return region.querySelector('h1');
  }

  function moveFocus(region) {
    var el = focusTarget(region);
    if (!el) return;
    if (!el.hasAttribute('tabindex')) el.setAttribute('tabindex', '-1');
    el.focus();
  }

  // htmx fires htmx:afterSettle on the swapped element once its attributes have
  // settled, after its own focus restoration, so the focus moved here stays.
  document.addEventListener('htmx:afterSettle', function (evt) {
    var region = evt.target;
    if (!region || !region.isConnected || !region.querySelectorAll) return;
    moveFocus(region);
    enhance(region);
  });

  // The Clipboard API exists only in secure contexts (https, localhost).
  var canCopy = !!(navigator.clipboard && navigator.clipboard.writeText);

  function showCopyButtons(root) {
    if (!canCopy) return;
    var btns = root.querySelectorAll('button[data-copy]');
    for (var i = 0; i < btns.length; i++) btns[i].hidden = false;
  }

  document.addEventListener('click', function (evt) {
    var btn = evt.target && evt.target.closest ? evt.target.closest('button[data-copy]') : null;
    if (!btn || !canCopy) return;
    var text = btn.getAttribute('data-copy') || '';
    navigator.clipboard.writeText(text).then(function () {
      var done = btn.getAttribute('data-copied') || 'Copied';
      var section = btn.closest('section') || document;
      var status = section.querySelector('[data-copy-status]');
      // Clear first, so that copying the same field twice is announced twice.
      if (status) {
        status.textContent = '';
        window.setTimeout(function () {
          status.textContent = done + ': ' + text;
        }, 50);
      }
      if (!btn.dataset.copyLabel) btn.dataset.copyLabel = btn.innerHTML;
      btn.firstChild.nodeValue = done;
      window.clearTimeout(Number(btn.dataset.copyTimer || 0));
      btn.dataset.copyTimer = String(window.setTimeout(function () {
        btn.innerHTML = btn.dataset.copyLabel;
      }, 2000));
    }, function () {
      // Refused (permissions): the value stays selectable text.
    });
  });

  function enhance(root) {
    startCountdowns(root);
    showCopyButtons(root);
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', function () {
      enhance(document);
    });
  } else {
    enhance(document);
  }
})();
