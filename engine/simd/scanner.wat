;; Trawl's SIMD byte scanner (WebAssembly, v128). Built by tools/build_scanner.ts (`deno task
;; scanner`, wabt's wat2wasm from npm) into scanner_wasm.ts; engine/simd/README.md tells what it
;; computes and scanner.ts how it is called.
;;
;; The caller copies the bytes to scan to `in` and pads them with 64 spaces; every kernel works
;; on 64-byte blocks, each compare giving one bit per byte (i8x16.eq + i8x16.bitmask, four per
;; block), and writes positions (block offset + ctz of the bits, plus `bias`) as u32s.
;;
;; Memory at 0: [0] backslashes written, [4] errors written, [8] 1 when a capped list overflowed.
(module
  (memory (export "memory") 1)

  ;; The 64 bits of four lane masks (0x00 / 0xff per byte), the first vector lowest.
  (func $bits (param $a v128) (param $b v128) (param $c v128) (param $d v128) (result i64)
    (i64.or
      (i64.or
        (i64.extend_i32_u (i8x16.bitmask (local.get $a)))
        (i64.shl (i64.extend_i32_u (i8x16.bitmask (local.get $b))) (i64.const 16)))
      (i64.or
        (i64.shl (i64.extend_i32_u (i8x16.bitmask (local.get $c))) (i64.const 32))
        (i64.shl (i64.extend_i32_u (i8x16.bitmask (local.get $d))) (i64.const 48)))))

  ;; Bytes equal to one of `c`'s lanes (all lanes the same).
  (func $eq (param $a v128) (param $b v128) (param $c v128) (param $d v128) (param $x v128)
    (result i64)
    (call $bits
      (i8x16.eq (local.get $a) (local.get $x)) (i8x16.eq (local.get $b) (local.get $x))
      (i8x16.eq (local.get $c) (local.get $x)) (i8x16.eq (local.get $d) (local.get $x))))

  ;; One 16-byte lane mask: the structural characters { } [ ] : , (0x20 folds [ into { and ] into }).
  (func $structural (param $v v128) (result v128)
    (local $f v128)
    (local.set $f (v128.or (local.get $v) (i8x16.splat (i32.const 0x20))))
    (v128.or
      (v128.or
        (i8x16.eq (local.get $f) (i8x16.splat (i32.const 0x7b)))
        (i8x16.eq (local.get $f) (i8x16.splat (i32.const 0x7d))))
      (v128.or
        (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x3a)))
        (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x2c))))))

  ;; One 16-byte lane mask: the characters JSON allows after a backslash: " \ / b f n r t u.
  (func $escapable (param $v v128) (result v128)
    (v128.or
      (v128.or
        (v128.or
          (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x22)))
          (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x5c))))
        (v128.or
          (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x2f)))
          (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x62)))))
      (v128.or
        (v128.or
          (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x66)))
          (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x6e))))
        (v128.or
          (v128.or
            (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x72)))
            (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x74))))
          (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x75)))))))

  ;; One 16-byte lane mask: hexadecimal digits 0-9 a-f A-F.
  (func $hex (param $v v128) (result v128)
    (v128.or
      (i8x16.le_u
        (i8x16.sub (local.get $v) (i8x16.splat (i32.const 0x30)))
        (i8x16.splat (i32.const 9)))
      (i8x16.le_u
        (i8x16.sub
          (v128.or (local.get $v) (i8x16.splat (i32.const 0x20)))
          (i8x16.splat (i32.const 0x61)))
        (i8x16.splat (i32.const 5)))))

  ;; Prefix XOR: bit i is the XOR of bits 0..i (a carry-less multiply by all ones).
  (func $prefixXor (param $x i64) (result i64)
    (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 1))))
    (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 2))))
    (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 4))))
    (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 8))))
    (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 16))))
    (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 32))))

  ;; Writes base + the offset of each set bit to `dst` (u32s, lowest first); returns the end.
  (func $flatten (param $bits i64) (param $base i32) (param $dst i32) (result i32)
    (block $done
      (loop $next
        (br_if $done (i64.eqz (local.get $bits)))
        (i32.store (local.get $dst)
          (i32.add (local.get $base) (i32.wrap_i64 (i64.ctz (local.get $bits)))))
        (local.set $dst (i32.add (local.get $dst) (i32.const 4)))
        (local.set $bits (i64.and (local.get $bits) (i64.sub (local.get $bits) (i64.const 1))))
        (br $next)))
    (local.get $dst))

  ;; As $flatten, but into a list ending at `limit`: when it would not fit, writes nothing and
  ;; sets the overflow flag.
  (func $flattenCapped (param $bits i64) (param $base i32) (param $dst i32) (param $limit i32)
    (result i32)
    (if (i32.gt_u
          (i32.add (local.get $dst) (i32.shl (i32.wrap_i64 (i64.popcnt (local.get $bits))) (i32.const 2)))
          (local.get $limit))
      (then
        (i32.store (i32.const 8) (i32.const 1))
        (return (local.get $dst))))
    (call $flatten (local.get $bits) (local.get $base) (local.get $dst)))

  ;; simdjson's first stage for `len` bytes at `in` that start outside a string (at a line start
  ;; of JSON lines). Writes, as positions + `bias`:
  ;;   at `tok`: every quote that is not escaped and every { } [ ] : , outside strings, in order
  ;;     (room for len + 64 u32s needed); the count is returned;
  ;;   at `esc` (up to `escEnd`): every backslash (a string with one holds escapes);
  ;;   at `err` (up to `errEnd`): bytes that make a line invalid JSON in a way the token walk
  ;;     cannot see: a byte below 0x20 in a string (a line end there also closes the string, so
  ;;     that the next line starts outside one), a backslash outside a string, an escape JSON does
  ;;     not have, a \u not followed by four hexadecimal digits.
  (func (export "indexJson") (param $in i32) (param $len i32) (param $bias i32) (param $tok i32)
    (param $esc i32) (param $escEnd i32) (param $err i32) (param $errEnd i32) (result i32)
    (local $p i32) (local $end i32) (local $base i32) (local $t i32) (local $e i32) (local $r i32)
    (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128)
    (local $quote i64) (local $backslash i64) (local $structural i64) (local $control i64)
    (local $newline i64) (local $escaped i64) (local $prevOdd i64) (local $inString i64)
    (local $carry i64) (local $toggles i64) (local $x i64) (local $errors i64) (local $prevU i64)
    (local $u i64) (local $starts i64) (local $evenStart i64) (local $evenStarts i64)
    (local $oddStarts i64) (local $evenCarries i64) (local $oddCarries i64)
    (local.set $p (local.get $in))
    (local.set $end (i32.add (local.get $in) (local.get $len)))
    (local.set $base (local.get $bias))
    (local.set $t (local.get $tok))
    (local.set $e (local.get $esc))
    (local.set $r (local.get $err))
    (i32.store (i32.const 8) (i32.const 0))
    (block $done
      (loop $block
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $v0 (v128.load (local.get $p)))
        (local.set $v1 (v128.load offset=16 (local.get $p)))
        (local.set $v2 (v128.load offset=32 (local.get $p)))
        (local.set $v3 (v128.load offset=48 (local.get $p)))
        (local.set $quote (call $eq (local.get $v0) (local.get $v1) (local.get $v2) (local.get $v3)
          (i8x16.splat (i32.const 0x22))))
        (local.set $backslash (call $eq (local.get $v0) (local.get $v1) (local.get $v2)
          (local.get $v3) (i8x16.splat (i32.const 0x5c))))
        (local.set $newline (call $eq (local.get $v0) (local.get $v1) (local.get $v2)
          (local.get $v3) (i8x16.splat (i32.const 0x0a))))
        (local.set $structural (call $bits
          (call $structural (local.get $v0)) (call $structural (local.get $v1))
          (call $structural (local.get $v2)) (call $structural (local.get $v3))))
        (local.set $control (call $bits
          (i8x16.lt_u (local.get $v0) (i8x16.splat (i32.const 0x20)))
          (i8x16.lt_u (local.get $v1) (i8x16.splat (i32.const 0x20)))
          (i8x16.lt_u (local.get $v2) (i8x16.splat (i32.const 0x20)))
          (i8x16.lt_u (local.get $v3) (i8x16.splat (i32.const 0x20)))))
        ;; Escaped bytes: those ending an odd run of backslashes (simdjson's odd-sequence
        ;; search: runs starting at even and at odd offsets carried separately by addition).
        (local.set $escaped (i64.const 0))
        (if (i64.ne (i64.or (local.get $backslash) (local.get $prevOdd)) (i64.const 0))
          (then
            (local.set $starts (i64.and (local.get $backslash)
              (i64.xor (i64.shl (local.get $backslash) (i64.const 1)) (i64.const -1))))
            (local.set $evenStart (i64.xor (i64.const 0x5555555555555555) (local.get $prevOdd)))
            (local.set $evenStarts (i64.and (local.get $starts) (local.get $evenStart)))
            (local.set $oddStarts (i64.and (local.get $starts)
              (i64.xor (local.get $evenStart) (i64.const -1))))
            (local.set $evenCarries (i64.add (local.get $backslash) (local.get $evenStarts)))
            (local.set $oddCarries (i64.add (local.get $backslash) (local.get $oddStarts)))
            (local.set $x (i64.or (local.get $oddCarries) (local.get $prevOdd)))
            ;; The carry out of the odd additions: an odd run reaches the next block.
            (local.set $prevOdd (i64.extend_i32_u
              (i64.lt_u (local.get $oddCarries) (local.get $backslash))))
            (local.set $escaped (i64.or
              (i64.and
                (i64.and (local.get $evenCarries)
                  (i64.xor (local.get $backslash) (i64.const -1)))
                (i64.const 0xaaaaaaaaaaaaaaaa))
              (i64.and
                (i64.and (local.get $x) (i64.xor (local.get $backslash) (i64.const -1)))
                (i64.const 0x5555555555555555))))))
        (local.set $quote (i64.and (local.get $quote)
          (i64.xor (local.get $escaped) (i64.const -1))))
        ;; Inside strings: from an opening quote up to (not with) its closing quote.
        (local.set $inString (i64.xor (call $prefixXor (local.get $quote)) (local.get $carry)))
        ;; A line end inside a string ends it too (the line is invalid; the next one is not
        ;; misread): a rare loop, once per such line end.
        (local.set $errors (i64.const 0))
        (local.set $toggles (local.get $quote))
        (block $closed
          (loop $again
            (local.set $x (i64.and (local.get $newline) (local.get $inString)))
            (br_if $closed (i64.eqz (local.get $x)))
            (local.set $x (i64.and (local.get $x) (i64.sub (i64.const 0) (local.get $x))))
            (local.set $errors (i64.or (local.get $errors) (local.get $x)))
            (local.set $toggles (i64.xor (local.get $toggles) (local.get $x)))
            (local.set $inString
              (i64.xor (call $prefixXor (local.get $toggles)) (local.get $carry)))
            (br $again)))
        (local.set $carry (i64.shr_s (local.get $inString) (i64.const 63)))
        (local.set $errors (i64.or (local.get $errors)
          (i64.or
            (i64.and (local.get $control) (local.get $inString))
            (i64.and (local.get $backslash)
              (i64.xor (local.get $inString) (i64.const -1))))))
        ;; Escapes JSON allows, and four hex digits after each \u (carried into the next block).
        (if (i64.ne (i64.or (local.get $escaped) (local.get $prevU)) (i64.const 0))
          (then
            (local.set $errors (i64.or (local.get $errors)
              (i64.and (local.get $escaped)
                (i64.xor
                  (call $bits
                    (call $escapable (local.get $v0)) (call $escapable (local.get $v1))
                    (call $escapable (local.get $v2)) (call $escapable (local.get $v3)))
                  (i64.const -1)))))
            (local.set $u (i64.and (local.get $escaped)
              (call $eq (local.get $v0) (local.get $v1) (local.get $v2) (local.get $v3)
                (i8x16.splat (i32.const 0x75)))))
            (local.set $x (i64.or
              (i64.or
                (i64.or (i64.shl (local.get $u) (i64.const 1))
                  (i64.shr_u (local.get $prevU) (i64.const 63)))
                (i64.or (i64.shl (local.get $u) (i64.const 2))
                  (i64.shr_u (local.get $prevU) (i64.const 62))))
              (i64.or
                (i64.or (i64.shl (local.get $u) (i64.const 3))
                  (i64.shr_u (local.get $prevU) (i64.const 61)))
                (i64.or (i64.shl (local.get $u) (i64.const 4))
                  (i64.shr_u (local.get $prevU) (i64.const 60))))))
            (local.set $errors (i64.or (local.get $errors)
              (i64.and (local.get $x)
                (i64.xor
                  (call $bits
                    (call $hex (local.get $v0)) (call $hex (local.get $v1))
                    (call $hex (local.get $v2)) (call $hex (local.get $v3)))
                  (i64.const -1)))))
            (local.set $prevU (local.get $u))))
        (local.set $t (call $flatten
          (i64.or (local.get $quote)
            (i64.and (local.get $structural) (i64.xor (local.get $inString) (i64.const -1))))
          (local.get $base) (local.get $t)))
        (if (i64.ne (local.get $backslash) (i64.const 0))
          (then (local.set $e (call $flattenCapped (local.get $backslash) (local.get $base)
            (local.get $e) (local.get $escEnd)))))
        (if (i64.ne (local.get $errors) (i64.const 0))
          (then (local.set $r (call $flattenCapped (local.get $errors) (local.get $base)
            (local.get $r) (local.get $errEnd)))))
        (local.set $p (i32.add (local.get $p) (i32.const 64)))
        (local.set $base (i32.add (local.get $base) (i32.const 64)))
        (br $block)))
    (i32.store (i32.const 0) (i32.shr_u (i32.sub (local.get $e) (local.get $esc)) (i32.const 2)))
    (i32.store (i32.const 4) (i32.shr_u (i32.sub (local.get $r) (local.get $err)) (i32.const 2)))
    (i32.shr_u (i32.sub (local.get $t) (local.get $tok)) (i32.const 2)))

  ;; The positions (+ `bias`) of every byte equal to `byte` among `len` bytes at `in`, written at
  ;; `out` (room for len u32s needed); returns their count.
  (func (export "findByte") (param $in i32) (param $len i32) (param $bias i32) (param $byte i32)
    (param $out i32) (result i32)
    (local $p i32) (local $end i32) (local $base i32) (local $o i32) (local $x v128)
    (local $bits i64) (local $left i32)
    (local.set $x (i8x16.splat (local.get $byte)))
    (local.set $p (local.get $in))
    (local.set $end (i32.add (local.get $in) (local.get $len)))
    (local.set $base (local.get $bias))
    (local.set $o (local.get $out))
    (block $done
      (loop $block
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $bits (call $eq
          (v128.load (local.get $p)) (v128.load offset=16 (local.get $p))
          (v128.load offset=32 (local.get $p)) (v128.load offset=48 (local.get $p))
          (local.get $x)))
        ;; The padding after the last byte is not searched.
        (local.set $left (i32.sub (local.get $end) (local.get $p)))
        (if (i32.lt_u (local.get $left) (i32.const 64))
          (then (local.set $bits (i64.and (local.get $bits)
            (i64.sub (i64.shl (i64.const 1) (i64.extend_i32_u (local.get $left))) (i64.const 1))))))
        (local.set $o (call $flatten (local.get $bits) (local.get $base) (local.get $o)))
        (local.set $p (i32.add (local.get $p) (i32.const 64)))
        (local.set $base (i32.add (local.get $base) (i32.const 64)))
        (br $block)))
    (i32.shr_u (i32.sub (local.get $o) (local.get $out)) (i32.const 2))))
