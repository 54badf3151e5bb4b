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

  ;; As $flatten, eight positions at a time written whatever the bits (fewer branches the CPU
  ;; mispredicts where bits are dense): up to 7 u32s past the end are overwritten.
  (func $flatten8 (param $bits i64) (param $base i32) (param $dst i32) (result i32)
    (local $end i32)
    (local.set $end (i32.add (local.get $dst)
      (i32.shl (i32.wrap_i64 (i64.popcnt (local.get $bits))) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i64.eqz (local.get $bits)))
        (i32.store offset=0 (local.get $dst)
          (i32.add (local.get $base) (i32.wrap_i64 (i64.ctz (local.get $bits)))))
        (local.set $bits (i64.and (local.get $bits) (i64.sub (local.get $bits) (i64.const 1))))
        (i32.store offset=4 (local.get $dst)
          (i32.add (local.get $base) (i32.wrap_i64 (i64.ctz (local.get $bits)))))
        (local.set $bits (i64.and (local.get $bits) (i64.sub (local.get $bits) (i64.const 1))))
        (i32.store offset=8 (local.get $dst)
          (i32.add (local.get $base) (i32.wrap_i64 (i64.ctz (local.get $bits)))))
        (local.set $bits (i64.and (local.get $bits) (i64.sub (local.get $bits) (i64.const 1))))
        (i32.store offset=12 (local.get $dst)
          (i32.add (local.get $base) (i32.wrap_i64 (i64.ctz (local.get $bits)))))
        (local.set $bits (i64.and (local.get $bits) (i64.sub (local.get $bits) (i64.const 1))))
        (i32.store offset=16 (local.get $dst)
          (i32.add (local.get $base) (i32.wrap_i64 (i64.ctz (local.get $bits)))))
        (local.set $bits (i64.and (local.get $bits) (i64.sub (local.get $bits) (i64.const 1))))
        (i32.store offset=20 (local.get $dst)
          (i32.add (local.get $base) (i32.wrap_i64 (i64.ctz (local.get $bits)))))
        (local.set $bits (i64.and (local.get $bits) (i64.sub (local.get $bits) (i64.const 1))))
        (i32.store offset=24 (local.get $dst)
          (i32.add (local.get $base) (i32.wrap_i64 (i64.ctz (local.get $bits)))))
        (local.set $bits (i64.and (local.get $bits) (i64.sub (local.get $bits) (i64.const 1))))
        (i32.store offset=28 (local.get $dst)
          (i32.add (local.get $base) (i32.wrap_i64 (i64.ctz (local.get $bits)))))
        (local.set $bits (i64.and (local.get $bits) (i64.sub (local.get $bits) (i64.const 1))))
        (local.set $dst (i32.add (local.get $dst) (i32.const 32)))
        (br $next)))
    (local.get $end))

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
  ;;     (room for len + 72 u32s needed); the count is returned;
  ;;   at `esc` (up to `escEnd`): every backslash (a string with one holds escapes);
  ;;   at `err` (up to `errEnd`): bytes that make a line invalid JSON in a way the token walk
  ;;     cannot see: a byte below 0x20 in a string (a line end there also closes the string, so
  ;;     that the next line starts outside one), a backslash outside a string, an escape JSON does
  ;;     not have, the first byte of the four after a \u that is no hexadecimal digit.
  (func (export "indexJson") (param $in i32) (param $len i32) (param $bias i32) (param $tok i32)
    (param $esc i32) (param $escEnd i32) (param $err i32) (param $errEnd i32) (result i32)
    (local $p i32) (local $end i32) (local $base i32) (local $t i32) (local $e i32) (local $r i32)
    (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128)
    (local $quote i64) (local $backslash i64) (local $structural i64) (local $control i64)
    (local $newline i64) (local $escaped i64) (local $prevOdd i64) (local $inString i64)
    (local $carry i64) (local $toggles i64) (local $x i64) (local $errors i64)
    (local $c1 i64) (local $c2 i64) (local $c3 i64) (local $c4 i64) (local $a i64) (local $h i64)
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
        ;; Escapes JSON allows, and four hex digits after each \u: the first byte of the four
        ;; that is not one is an error (never past the line's end, itself no hex digit). $a walks
        ;; the digits a step at a time; $c1..$c4 carry each step's top bit into the next block.
        (if (i64.ne
              (i64.or (local.get $escaped)
                (i64.or (i64.or (local.get $c1) (local.get $c2)) (i64.or (local.get $c3) (local.get $c4))))
              (i64.const 0))
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
            (local.set $h (call $bits
              (call $hex (local.get $v0)) (call $hex (local.get $v1))
              (call $hex (local.get $v2)) (call $hex (local.get $v3))))
            (local.set $a (i64.or (i64.shl (local.get $u) (i64.const 1)) (local.get $c1)))
            (local.set $c1 (i64.shr_u (local.get $u) (i64.const 63)))
            (local.set $errors (i64.or (local.get $errors)
              (i64.and (local.get $a) (i64.xor (local.get $h) (i64.const -1)))))
            (local.set $x (i64.and (local.get $a) (local.get $h)))
            (local.set $a (i64.or (i64.shl (local.get $x) (i64.const 1)) (local.get $c2)))
            (local.set $c2 (i64.shr_u (local.get $x) (i64.const 63)))
            (local.set $errors (i64.or (local.get $errors)
              (i64.and (local.get $a) (i64.xor (local.get $h) (i64.const -1)))))
            (local.set $x (i64.and (local.get $a) (local.get $h)))
            (local.set $a (i64.or (i64.shl (local.get $x) (i64.const 1)) (local.get $c3)))
            (local.set $c3 (i64.shr_u (local.get $x) (i64.const 63)))
            (local.set $errors (i64.or (local.get $errors)
              (i64.and (local.get $a) (i64.xor (local.get $h) (i64.const -1)))))
            (local.set $x (i64.and (local.get $a) (local.get $h)))
            (local.set $a (i64.or (i64.shl (local.get $x) (i64.const 1)) (local.get $c4)))
            (local.set $c4 (i64.shr_u (local.get $x) (i64.const 63)))
            (local.set $errors (i64.or (local.get $errors)
              (i64.and (local.get $a) (i64.xor (local.get $h) (i64.const -1)))))))
        (local.set $t (call $flatten8
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
    (i32.shr_u (i32.sub (local.get $o) (local.get $out)) (i32.const 2)))
  ;; ---- Stage 2: the grammar of each line, on the index of stage 1 -----------------------------
  ;; Positions here are those of the tokens (input offset + bias): the byte at position i is at
  ;; $base + i ($base = in - bias), the end is $end (len + bias).
  (global $base (mut i32) (i32.const 0))
  (global $end (mut i32) (i32.const 0))

  ;; The byte at position `i`.
  (func $b (param $i i32) (result i32)
    (i32.load8_u (i32.add (global.get $base) (local.get $i))))

  ;; Past JSON white space within a line (space, tab, CR) from `i`, at most to the end.
  (func $ws (param $i i32) (result i32)
    (local $c i32)
    (block $out
      (loop $next
        (br_if $out (i32.ge_u (local.get $i) (global.get $end)))
        (local.set $c (call $b (local.get $i)))
        (br_if $out (i32.and (i32.and
          (i32.ne (local.get $c) (i32.const 0x20))
          (i32.ne (local.get $c) (i32.const 0x09)))
          (i32.ne (local.get $c) (i32.const 0x0d))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $i))

  (func $isDigit (param $c i32) (result i32)
    (i32.le_u (i32.sub (local.get $c) (i32.const 0x30)) (i32.const 9)))

  ;; Past the digits from `i`.
  (func $digits (param $i i32) (result i32)
    (block $out
      (loop $next
        (br_if $out (i32.eqz (call $isDigit (call $b (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $i))

  ;; Past a number or a literal (true, false, null) at `i`, JSON's grammar exactly; -1 if none.
  (func $scalar (param $i i32) (result i32)
    (local $c i32) (local $w i32)
    (local.set $c (call $b (local.get $i)))
    (local.set $w (i32.load (i32.add (global.get $base) (local.get $i))))
    (if (i32.eq (local.get $w) (i32.const 0x65757274)) ;; "true"
      (then (return (i32.add (local.get $i) (i32.const 4)))))
    (if (i32.eq (local.get $w) (i32.const 0x6c6c756e)) ;; "null"
      (then (return (i32.add (local.get $i) (i32.const 4)))))
    (if (i32.and
          (i32.eq (local.get $w) (i32.const 0x736c6166)) ;; "fals"
          (i32.eq (call $b (i32.add (local.get $i) (i32.const 4))) (i32.const 0x65)))
      (then (return (i32.add (local.get $i) (i32.const 5)))))
    (if (i32.eq (local.get $c) (i32.const 0x2d))
      (then
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (local.set $c (call $b (local.get $i)))))
    (if (i32.eq (local.get $c) (i32.const 0x30))
      (then (local.set $i (i32.add (local.get $i) (i32.const 1))))
      (else
        (if (i32.eqz (call $isDigit (local.get $c))) (then (return (i32.const -1))))
        (local.set $i (call $digits (local.get $i)))))
    (if (i32.eq (call $b (local.get $i)) (i32.const 0x2e))
      (then
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (if (i32.eqz (call $isDigit (call $b (local.get $i)))) (then (return (i32.const -1))))
        (local.set $i (call $digits (local.get $i)))))
    (local.set $c (i32.or (call $b (local.get $i)) (i32.const 0x20)))
    (if (i32.eq (local.get $c) (i32.const 0x65))
      (then
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (local.set $c (call $b (local.get $i)))
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x2b)) (i32.eq (local.get $c) (i32.const 0x2d)))
          (then (local.set $i (i32.add (local.get $i) (i32.const 1)))))
        (if (i32.eqz (call $isDigit (call $b (local.get $i)))) (then (return (i32.const -1))))
        (local.set $i (call $digits (local.get $i)))))
    (local.get $i))

  ;; The member key at positions [ks, ke) of an object that a path reaches, against the members
  ;; of that object's list at `list`: a u32 count, then per member six u32s: the key's length
  ;; and the address of its bytes, its leaf (or -1), the list of its own value's members (or
  ;; -1), and the range [lo, hi) of the leaves beneath it. A leaf takes the value's position
  ;; `pos` (after the colon) and token number `t` at rec + 4 + 8 * leaf (a key repeated: the
  ;; last one counts, as with JSON.parse); a member with members of its own has the leaves
  ;; beneath it cleared (-1: what an earlier repeat gave is undone) and its list returned, for
  ;; the object that may follow; -1 when the key is none of them.
  (func $match (param $ks i32) (param $ke i32) (param $list i32) (param $rec i32)
    (param $pos i32) (param $t i32) (result i32)
    (local $k i32) (local $n i32) (local $len i32) (local $at i32) (local $j i32) (local $e i32)
    (local $x i32)
    (local.set $len (i32.sub (local.get $ke) (local.get $ks)))
    (local.set $n (i32.load (local.get $list)))
    (local.set $e (i32.add (local.get $list) (i32.const 4)))
    (block $none
      (loop $keys
        (br_if $none (i32.ge_u (local.get $k) (local.get $n)))
        (if (i32.eq (i32.load (local.get $e)) (local.get $len))
          (then
            (local.set $at (i32.load offset=4 (local.get $e)))
            (local.set $j (i32.const 0))
            (block $differ
              (loop $bytes
                (if (i32.ge_u (local.get $j) (local.get $len))
                  (then
                    (local.set $x (i32.load offset=8 (local.get $e)))
                    (if (i32.ne (local.get $x) (i32.const -1))
                      (then
                        (local.set $x (i32.add (local.get $rec) (i32.shl (local.get $x) (i32.const 3))))
                        (i32.store offset=4 (local.get $x) (local.get $pos))
                        (i32.store offset=8 (local.get $x) (local.get $t))))
                    (local.set $x (i32.load offset=12 (local.get $e)))
                    (if (i32.ne (local.get $x) (i32.const -1))
                      (then
                        (local.set $j (i32.load offset=16 (local.get $e)))
                        (block $cleared
                          (loop $clear
                            (br_if $cleared (i32.ge_u (local.get $j) (i32.load offset=20 (local.get $e))))
                            (i64.store offset=4
                              (i32.add (local.get $rec) (i32.shl (local.get $j) (i32.const 3)))
                              (i64.const -1))
                            (local.set $j (i32.add (local.get $j) (i32.const 1)))
                            (br $clear)))))
                    (return (local.get $x))))
                (br_if $differ (i32.ne
                  (call $b (i32.add (local.get $ks) (local.get $j)))
                  (i32.load8_u (i32.add (local.get $at) (local.get $j)))))
                (local.set $j (i32.add (local.get $j) (i32.const 1)))
                (br $bytes)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (local.set $e (i32.add (local.get $e) (i32.const 24)))
        (br $keys)))
    (i32.const -1))

  ;; After indexJson over the same input: checks each line against JSON's grammar on the tokens
  ;; (white space, numbers and literals between them read as bytes). Writes, + bias:
  ;;   at `valid`: the start of every line that is one object, valid JSON, nested at most 96
  ;;     deep, with no error of stage 1 (`err`, `errCount` entries), ended by "\n"
  ;;     (room for len / 2 + 64 u32s needed); the count is returned;
  ;;   at `jump`: for each { and [ token of a valid line, the index of its closing token.
  ;;   at `slots`, when `nkeys` (the leaves of the member tree whose root list is at `keys`,
  ;;     see $match) > 0: for each valid line (in the order of `valid`), a record of
  ;;     1 + 2 * nkeys u32s: the number of its root `{` token, then per leaf the position and
  ;;     token number of its value (the member reached through members of the keys on the way),
  ;;     or -1 twice when the line has none.
  ;; `stack`: room for 192 u32s (the open tokens, then the member lists of the open objects).
  ;; Other lines are left to the JavaScript reference.
  (func (export "validateLines") (param $in i32) (param $len i32) (param $bias i32)
    (param $tok i32) (param $count i32) (param $err i32) (param $errCount i32) (param $jump i32)
    (param $valid i32) (param $stack i32) (param $keys i32) (param $nkeys i32) (param $slots i32)
    (result i32)
    (local $pos i32) (local $t i32) (local $v i32) (local $e i32) (local $line i32)
    (local $i i32) (local $j i32) (local $p i32) (local $q i32) (local $c i32)
    (local $depth i32) (local $state i32) (local $open i32) (local $oc i32)
    (local $base i32) (local $end i32) (local $rec i32) (local $ks i32) (local $k i32)
    (local $pending i32) (local $node i32) (local $lists i32)
    (local.set $lists (i32.add (local.get $stack) (i32.const 384)))
    (local.set $base (i32.sub (local.get $in) (local.get $bias)))
    (local.set $end (i32.add (local.get $len) (local.get $bias)))
    (global.set $base (local.get $base))
    (global.set $end (local.get $end))
    (local.set $pos (local.get $bias))
    (local.set $v (local.get $valid))
    (block $done
      (loop $lines
        (br_if $done (i32.ge_u (local.get $pos) (local.get $end)))
        (local.set $line (local.get $pos))
        ;; The first token of the line (a line given up may have taken tokens of this one).
        (block $back
          (loop $behind
            (br_if $back (i32.eqz (local.get $t)))
            (br_if $back (i32.lt_u (i32.load (i32.add (local.get $tok) (i32.shl (i32.sub (local.get $t) (i32.const 1)) (i32.const 2)))) (local.get $pos)))
            (local.set $t (i32.sub (local.get $t) (i32.const 1)))
            (br $behind)))
        (block $skip
          (loop $catchUp
            (br_if $skip (i32.ge_u (local.get $t) (local.get $count)))
            (br_if $skip (i32.ge_u (i32.load (i32.add (local.get $tok) (i32.shl (local.get $t) (i32.const 2)))) (local.get $pos)))
            (local.set $t (i32.add (local.get $t) (i32.const 1)))
            (br $catchUp)))
        (local.set $i (if (result i32) (i32.gt_u (i32.load8_u (i32.add (local.get $base) (local.get $pos))) (i32.const 0x20)) (then (local.get $pos)) (else (call $ws (local.get $pos)))))
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (block $bad
          (br_if $bad (i32.ne (i32.load (i32.add (local.get $tok) (i32.shl (local.get $t) (i32.const 2)))) (local.get $i)))
          (br_if $bad (i32.ne (i32.load8_u (i32.add (local.get $base) (local.get $i))) (i32.const 0x7b)))
          (if (local.get $nkeys)
            (then
              ;; This line's record (the valid lines so far number (v - valid) / 4): its root
              ;; token, and no member found yet.
              (local.set $rec (i32.add (local.get $slots)
                (i32.mul
                  (i32.shr_u (i32.sub (local.get $v) (local.get $valid)) (i32.const 2))
                  (i32.shl (i32.add (i32.shl (local.get $nkeys) (i32.const 1)) (i32.const 1)) (i32.const 2)))))
              (i32.store (local.get $rec) (local.get $t))
              (local.set $k (i32.const 0))
              (block $filled
                (loop $fill
                  (br_if $filled (i32.ge_u (local.get $k) (local.get $nkeys)))
                  (i64.store offset=4
                    (i32.add (local.get $rec) (i32.shl (local.get $k) (i32.const 3)))
                    (i64.const -1))
                  (local.set $k (i32.add (local.get $k) (i32.const 1)))
                  (br $fill)))))
          ;; The root object takes the root's member list (none without keys).
          (local.set $pending (select (local.get $keys) (i32.const -1) (local.get $nkeys)))
          (local.set $depth (i32.const 0))
          ;; state 0: a value is expected from i; 1: a key from i; 2: after a value (i past it)
          (local.set $state (i32.const 0))
          (block $lineEnd
            (loop $walk
              (if (i32.eqz (local.get $state))
                (then
                  ;; The member list for this value if it is an object (a path goes into it).
                  (local.set $node (local.get $pending))
                  (local.set $pending (i32.const -1))
                  (local.set $i (if (result i32) (i32.gt_u (i32.load8_u (i32.add (local.get $base) (local.get $i))) (i32.const 0x20)) (then (local.get $i)) (else (call $ws (local.get $i)))))
                  (local.set $p (i32.load (i32.add (local.get $tok) (i32.shl (local.get $t) (i32.const 2)))))
                  (if (i32.eq (local.get $i) (local.get $p))
                    (then
                      (local.set $c (i32.load8_u (i32.add (local.get $base) (local.get $p))))
                      (if (i32.eq (local.get $c) (i32.const 0x22))
                        (then
                          (local.set $q (i32.load (i32.add (local.get $tok) (i32.shl (i32.add (local.get $t) (i32.const 1)) (i32.const 2)))))
                          (br_if $bad (i32.eq (local.get $q) (i32.const -1)))
                          (local.set $t (i32.add (local.get $t) (i32.const 2)))
                          (local.set $i (i32.add (local.get $q) (i32.const 1)))
                          (local.set $state (i32.const 2))
                          (br $walk)))
                      (br_if $bad (i32.ne (i32.or (local.get $c) (i32.const 0x20)) (i32.const 0x7b)))
                      (br_if $bad (i32.ge_u (local.get $depth) (i32.const 96)))
                      (i32.store
                        (i32.add (local.get $stack) (i32.shl (local.get $depth) (i32.const 2)))
                        (local.get $t))
                      (i32.store
                        (i32.add (local.get $lists) (i32.shl (local.get $depth) (i32.const 2)))
                        (select (local.get $node) (i32.const -1) (i32.eq (local.get $c) (i32.const 0x7b))))
                      (local.set $depth (i32.add (local.get $depth) (i32.const 1)))
                      (local.set $t (i32.add (local.get $t) (i32.const 1)))
                      (local.set $q (i32.load (i32.add (local.get $tok) (i32.shl (local.get $t) (i32.const 2)))))
                      ;; An opening token is never the last of a valid line.
                      (br_if $bad (i32.eq (local.get $q) (i32.const -1)))
                      ;; Empty: the closing token right after white space.
                      (if (i32.and
                            (i32.eq (if (result i32) (i32.gt_u (i32.load8_u (i32.add (local.get $base) (i32.add (local.get $p) (i32.const 1)))) (i32.const 0x20)) (then (i32.add (local.get $p) (i32.const 1))) (else (call $ws (i32.add (local.get $p) (i32.const 1))))) (local.get $q))
                            (i32.eq (i32.load8_u (i32.add (local.get $base) (local.get $q))) (i32.add (local.get $c) (i32.const 2))))
                        (then
                          (i32.store
                            (i32.add (local.get $jump) (i32.shl (i32.sub (local.get $t) (i32.const 1)) (i32.const 2)))
                            (local.get $t))
                          (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
                          (local.set $t (i32.add (local.get $t) (i32.const 1)))
                          (local.set $i (i32.add (local.get $q) (i32.const 1)))
                          (local.set $state (i32.const 2))
                          (br $walk)))
                      (local.set $i (i32.add (local.get $p) (i32.const 1)))
                      (local.set $state (select (i32.const 1) (i32.const 0)
                        (i32.eq (local.get $c) (i32.const 0x7b))))
                      (br $walk)))
                  (local.set $i (call $scalar (local.get $i)))
                  (br_if $bad (i32.lt_s (local.get $i) (i32.const 0)))
                  (local.set $state (i32.const 2))
                  (br $walk)))
              (if (i32.eq (local.get $state) (i32.const 1))
                (then
                  (local.set $p (i32.load (i32.add (local.get $tok) (i32.shl (local.get $t) (i32.const 2)))))
                  (br_if $bad (i32.ne (if (result i32) (i32.gt_u (i32.load8_u (i32.add (local.get $base) (local.get $i))) (i32.const 0x20)) (then (local.get $i)) (else (call $ws (local.get $i)))) (local.get $p)))
                  (br_if $bad (i32.ne (i32.load8_u (i32.add (local.get $base) (local.get $p))) (i32.const 0x22)))
                  (local.set $ks (i32.add (local.get $p) (i32.const 1)))
                  (local.set $q (i32.load (i32.add (local.get $tok) (i32.shl (i32.add (local.get $t) (i32.const 1)) (i32.const 2)))))
                  (br_if $bad (i32.eq (local.get $q) (i32.const -1)))
                  (local.set $t (i32.add (local.get $t) (i32.const 2)))
                  (local.set $p (i32.load (i32.add (local.get $tok) (i32.shl (local.get $t) (i32.const 2)))))
                  (br_if $bad (i32.ne (if (result i32) (i32.gt_u (i32.load8_u (i32.add (local.get $base) (i32.add (local.get $q) (i32.const 1)))) (i32.const 0x20)) (then (i32.add (local.get $q) (i32.const 1))) (else (call $ws (i32.add (local.get $q) (i32.const 1))))) (local.get $p)))
                  (br_if $bad (i32.ne (i32.load8_u (i32.add (local.get $base) (local.get $p))) (i32.const 0x3a)))
                  (local.set $t (i32.add (local.get $t) (i32.const 1)))
                  (local.set $i (i32.add (local.get $p) (i32.const 1)))
                  ;; A member of an object a path reaches: one of the keys wanted?
                  (if (local.get $nkeys)
                    (then
                      (local.set $node (i32.load (i32.add (local.get $lists)
                        (i32.shl (i32.sub (local.get $depth) (i32.const 1)) (i32.const 2)))))
                      (if (i32.ne (local.get $node) (i32.const -1))
                        (then (local.set $pending (call $match (local.get $ks) (local.get $q)
                          (local.get $node) (local.get $rec) (local.get $i) (local.get $t)))))))
                  (local.set $state (i32.const 0))
                  (br $walk)))
              ;; state 2: after a value.
              (br_if $lineEnd (i32.eqz (local.get $depth)))
              (local.set $p (i32.load (i32.add (local.get $tok) (i32.shl (local.get $t) (i32.const 2)))))
              (br_if $bad (i32.ne (if (result i32) (i32.gt_u (i32.load8_u (i32.add (local.get $base) (local.get $i))) (i32.const 0x20)) (then (local.get $i)) (else (call $ws (local.get $i)))) (local.get $p)))
              (local.set $c (i32.load8_u (i32.add (local.get $base) (local.get $p))))
              (local.set $open (i32.load
                (i32.add (local.get $stack)
                  (i32.shl (i32.sub (local.get $depth) (i32.const 1)) (i32.const 2)))))
              (local.set $oc (i32.load8_u (i32.add (local.get $base) (i32.load (i32.add (local.get $tok) (i32.shl (local.get $open) (i32.const 2)))))))
              (if (i32.eq (local.get $c) (i32.const 0x2c))
                (then
                  (local.set $t (i32.add (local.get $t) (i32.const 1)))
                  (local.set $i (i32.add (local.get $p) (i32.const 1)))
                  (local.set $state (select (i32.const 1) (i32.const 0)
                    (i32.eq (local.get $oc) (i32.const 0x7b))))
                  (br $walk)))
              ;; { + 2 is }, [ + 2 is ]
              (br_if $bad (i32.ne (local.get $c) (i32.add (local.get $oc) (i32.const 2))))
              (i32.store
                (i32.add (local.get $jump) (i32.shl (local.get $open) (i32.const 2)))
                (local.get $t))
              (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
              (local.set $t (i32.add (local.get $t) (i32.const 1)))
              (local.set $i (i32.add (local.get $p) (i32.const 1)))
              (br $walk)))
          ;; The root closed: white space, then the line's end.
          (local.set $j (if (result i32) (i32.gt_u (i32.load8_u (i32.add (local.get $base) (local.get $i))) (i32.const 0x20)) (then (local.get $i)) (else (call $ws (local.get $i)))))
          (br_if $bad (i32.ge_u (local.get $j) (local.get $end)))
          (br_if $bad (i32.ne (i32.load8_u (i32.add (local.get $base) (local.get $j))) (i32.const 0x0a)))
          ;; No error of stage 1 in the line.
          (block $clear
            (loop $errs
              (br_if $clear (i32.ge_u (local.get $e) (local.get $errCount)))
              (br_if $clear (i32.ge_u
                (i32.load (i32.add (local.get $err) (i32.shl (local.get $e) (i32.const 2))))
                (local.get $line)))
              (local.set $e (i32.add (local.get $e) (i32.const 1)))
              (br $errs)))
          (if (i32.lt_u (local.get $e) (local.get $errCount))
            (then
              (br_if $bad (i32.le_u
                (i32.load (i32.add (local.get $err) (i32.shl (local.get $e) (i32.const 2))))
                (local.get $j)))))
          (i32.store (local.get $v) (local.get $line))
          (local.set $v (i32.add (local.get $v) (i32.const 4)))
          (local.set $pos (i32.add (local.get $j) (i32.const 1)))
          (br $lines))
        ;; A line not taken: on from the first line end at or after where the walk stopped, or
        ;; after the line's first error of stage 1 if the walk went past it (a string that a line
        ;; end closed took the tokens of the next line: the error is at that line end or before).
        (if (i32.lt_s (local.get $i) (local.get $line)) (then (local.set $i (local.get $line))))
        (block $seen
          (loop $errs2
            (br_if $seen (i32.ge_u (local.get $e) (local.get $errCount)))
            (local.set $j
              (i32.load (i32.add (local.get $err) (i32.shl (local.get $e) (i32.const 2)))))
            (if (i32.ge_u (local.get $j) (local.get $line))
              (then
                (if (i32.lt_u (local.get $j) (local.get $i)) (then (local.set $i (local.get $j))))
                (br $seen)))
            (local.set $e (i32.add (local.get $e) (i32.const 1)))
            (br $errs2)))
        (block $found
          (loop $seek
            (br_if $found (i32.ge_u (local.get $i) (local.get $end)))
            (br_if $found (i32.eq (i32.load8_u (i32.add (local.get $base) (local.get $i))) (i32.const 0x0a)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $seek)))
        (local.set $pos (i32.add (local.get $i) (i32.const 1)))
        (br $lines)))
    (i32.shr_u (i32.sub (local.get $v) (local.get $valid)) (i32.const 2)))
)
