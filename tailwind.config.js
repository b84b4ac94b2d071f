// Tailwind CSS v3 configuration for the portal's one stylesheet.
//
// Build with `make css` (static/src/app.css -> static/dist/app.css, minified and
// committed); `make test` fails through `make css-check` when the committed file
// is not what this configuration builds. The npm packages live in
// static/node_modules (`npm ci --prefix static`), not at the top level, which is
// why the plugin is required by path.

/** @type {import('tailwindcss').Config} */
module.exports = {
  content: {
    // Globs are relative to this file, not to the directory tailwindcss runs in.
    relative: true,
    files: [
      './views/**/*.templ',
      './views/**/*_templ.go',
      './handlers/**/*.go',
      // Tests only repeat class names the pages already use; leaving them out
      // keeps a test edit from changing the committed CSS.
      '!./handlers/**/*_test.go',
      './static/src/**/*.js',
    ],
  },
  // The component classes of static/src/app.css are always built, so a handler
  // or view may pick one by name at run time (for example "badge-" + status).
  safelist: [
    'btn',
    'btn-primary',
    'btn-secondary',
    'btn-link',
    'card',
    'badge',
    'badge-available',
    'badge-registered',
    'badge-pending',
    'field-error',
    'error-summary',
    'notice',
  ],
  future: {
    // Hover styles only on devices that can hover: no "stuck" hover on phones.
    hoverOnlyWhenSupported: true,
  },
  theme: {
    extend: {
      fontFamily: {
        // The platform's own interface font: nothing to download, familiar to
        // the reader, good hinting at small sizes.
        sans: [
          'system-ui',
          '-apple-system',
          '"Segoe UI"',
          'Roboto',
          '"Helvetica Neue"',
          '"Noto Sans"',
          '"Liberation Sans"',
          'Arial',
          'sans-serif',
          '"Apple Color Emoji"',
          '"Segoe UI Emoji"',
          '"Segoe UI Symbol"',
          '"Noto Color Emoji"',
        ],
      },
      colors: {
        // A calm blue-teal. Contrast (WCAG 2.x): brand-700 on white 8.1:1,
        // white on brand-700 8.1:1, brand-600 on white 6.2:1 (focus rings),
        // brand-800 on brand-50 9.2:1. Neutrals are Tailwind's slate; errors red-700
        // (6.5:1 on white, 5.9:1 on red-50).
        brand: {
          50: '#f0f7fa',
          100: '#d9edf3',
          200: '#b5dae7',
          300: '#82bfd5',
          400: '#4a9dbd',
          500: '#2e81a3',
          600: '#236889',
          700: '#1f5570',
          800: '#1e475d',
          900: '#1d3c4f',
          950: '#0f2634',
        },
      },
    },
  },
  plugins: [
    // 'base' styles every input, select and textarea without extra classes, so
    // the plain HTML of the views is styled consistently.
    require('./static/node_modules/@tailwindcss/forms')({ strategy: 'base' }),
  ],
}
