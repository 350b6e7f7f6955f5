//! The sizes a blocked filter is built with, pinned: `BlockedBloomFilter::new` (which uses
//! `default_params`), `new_compact` and `new_split_block` must choose the same (blocks,
//! layout) for every (n, p) of the grid as they did when the table was written, so that a
//! faster size search (or any other change to the sizing model's evaluation) can never change
//! the size of a filter a user creates. The table was produced by
//! `cargo run --release -p bloomkit --example blocked_sizing -- --table` before the search was
//! made faster.

use bloomkit::probe::blocked::{default_params, params_for, BlockLayout};
use BlockLayout::{Bits, SplitBlock, SplitBlock256};

/// (n, p, default blocks, default layout, compact blocks, compact layout, split-block blocks).
#[rustfmt::skip]
const PINNED: [(u64, f64, u64, BlockLayout, u64, BlockLayout, u64); 100] = [
    (1, 5e-1, 1, SplitBlock256, 1, Bits(1), 1),
    (1, 2e-1, 1, SplitBlock256, 1, Bits(1), 1),
    (1, 1e-1, 1, SplitBlock256, 1, Bits(1), 1),
    (1, 3e-2, 1, SplitBlock256, 1, Bits(3), 1),
    (1, 1e-2, 1, SplitBlock256, 1, Bits(5), 1),
    (1, 3.7e-3, 1, SplitBlock256, 1, Bits(6), 1),
    (1, 1e-3, 1, SplitBlock256, 1, Bits(8), 1),
    (1, 1e-4, 1, SplitBlock256, 1, Bits(11), 1),
    (1, 1e-6, 1, SplitBlock256, 1, Bits(18), 1),
    (1, 1e-9, 1, SplitBlock256, 1, Bits(28), 1),
    (10, 5e-1, 1, SplitBlock256, 1, Bits(1), 1),
    (10, 2e-1, 1, SplitBlock256, 1, Bits(1), 1),
    (10, 1e-1, 1, SplitBlock256, 1, Bits(1), 1),
    (10, 3e-2, 1, SplitBlock256, 1, Bits(3), 1),
    (10, 1e-2, 1, SplitBlock256, 1, Bits(5), 1),
    (10, 3.7e-3, 1, SplitBlock256, 1, Bits(6), 1),
    (10, 1e-3, 1, SplitBlock256, 1, Bits(8), 1),
    (10, 1e-4, 1, SplitBlock256, 1, Bits(11), 1),
    (10, 1e-6, 1, Bits(18), 1, Bits(18), 2),
    (10, 1e-9, 2, Bits(28), 2, Bits(28), 4),
    (1000, 5e-1, 3, Bits(1), 3, Bits(1), 7),
    (1000, 2e-1, 7, Bits(2), 7, Bits(2), 10),
    (1000, 1e-1, 10, Bits(3), 10, Bits(3), 12),
    (1000, 3e-2, 16, SplitBlock, 15, Bits(4), 16),
    (1000, 1e-2, 21, SplitBlock256, 20, Bits(5), 20),
    (1000, 3.7e-3, 26, SplitBlock256, 24, Bits(7), 25),
    (1000, 1e-3, 33, SplitBlock256, 31, Bits(8), 31),
    (1000, 1e-4, 47, SplitBlock, 43, Bits(11), 47),
    (1000, 1e-6, 76, Bits(18), 76, Bits(18), 102),
    (1000, 1e-9, 160, Bits(28), 160, Bits(28), 365),
    (12345, 5e-1, 35, Bits(1), 35, Bits(1), 78),
    (12345, 2e-1, 82, Bits(2), 82, Bits(2), 115),
    (12345, 1e-1, 117, Bits(3), 117, Bits(3), 142),
    (12345, 3e-2, 192, SplitBlock, 179, Bits(5), 192),
    (12345, 1e-2, 254, SplitBlock256, 239, Bits(6), 244),
    (12345, 3.7e-3, 314, SplitBlock256, 295, Bits(8), 297),
    (12345, 1e-3, 408, SplitBlock256, 374, Bits(9), 380),
    (12345, 1e-4, 570, SplitBlock, 529, Bits(12), 570),
    (12345, 1e-6, 933, Bits(18), 933, Bits(18), 1251),
    (12345, 1e-9, 1967, Bits(28), 1967, Bits(28), 4504),
    (100000, 5e-1, 282, Bits(1), 282, Bits(1), 631),
    (100000, 2e-1, 660, Bits(2), 660, Bits(2), 930),
    (100000, 1e-1, 944, Bits(3), 944, Bits(3), 1149),
    (100000, 3e-2, 1555, SplitBlock, 1449, Bits(5), 1555),
    (100000, 1e-2, 2057, SplitBlock256, 1933, Bits(6), 1973),
    (100000, 3.7e-3, 2538, SplitBlock256, 2388, Bits(8), 2405),
    (100000, 1e-3, 3299, SplitBlock256, 3026, Bits(9), 3072),
    (100000, 1e-4, 4611, SplitBlock, 4281, Bits(12), 4611),
    (100000, 1e-6, 7550, Bits(18), 7550, Bits(18), 10131),
    (100000, 1e-9, 15930, Bits(28), 15930, Bits(28), 36479),
    (1000000, 5e-1, 2818, Bits(1), 2818, Bits(1), 6310),
    (1000000, 2e-1, 6600, Bits(2), 6600, Bits(2), 9292),
    (1000000, 1e-1, 9437, Bits(3), 9437, Bits(3), 11483),
    (1000000, 3e-2, 15542, SplitBlock, 14484, Bits(5), 15542),
    (1000000, 1e-2, 20565, SplitBlock256, 19328, Bits(6), 19726),
    (1000000, 3.7e-3, 25371, SplitBlock256, 23873, Bits(8), 24046),
    (1000000, 1e-3, 32988, SplitBlock256, 30251, Bits(9), 30713),
    (1000000, 1e-4, 46108, SplitBlock, 42801, Bits(12), 46108),
    (1000000, 1e-6, 75499, Bits(18), 75499, Bits(18), 101304),
    (1000000, 1e-9, 159300, Bits(28), 159300, Bits(28), 364784),
    (10000000, 5e-1, 28178, Bits(1), 28178, Bits(1), 63094),
    (10000000, 2e-1, 65992, Bits(2), 65992, Bits(2), 92914),
    (10000000, 1e-1, 94367, Bits(3), 94367, Bits(3), 114828),
    (10000000, 3e-2, 155419, SplitBlock, 144834, Bits(5), 155419),
    (10000000, 1e-2, 205650, SplitBlock256, 193280, Bits(6), 197253),
    (10000000, 3.7e-3, 253705, SplitBlock256, 238726, Bits(8), 240451),
    (10000000, 1e-3, 329880, SplitBlock256, 302507, Bits(9), 307122),
    (10000000, 1e-4, 461071, SplitBlock, 428009, Bits(12), 461071),
    (10000000, 1e-6, 754987, Bits(18), 754987, Bits(18), 1013039),
    (10000000, 1e-9, 1592999, Bits(28), 1592999, Bits(28), 3647832),
    (123456789, 5e-1, 347873, Bits(1), 347873, Bits(1), 778937),
    (123456789, 2e-1, 814714, Bits(2), 814714, Bits(2), 1147078),
    (123456789, 1e-1, 1165013, Bits(3), 1165013, Bits(3), 1417627),
    (123456789, 3e-2, 1918753, SplitBlock, 1788067, Bits(5), 1918753),
    (123456789, 1e-2, 2538878, SplitBlock256, 2386165, Bits(6), 2435212),
    (123456789, 3.7e-3, 3132153, SplitBlock256, 2947225, Bits(8), 2968526),
    (123456789, 1e-3, 4072582, SplitBlock256, 3734650, Bits(9), 3791620),
    (123456789, 1e-4, 5692225, SplitBlock, 5284058, Bits(12), 5692225),
    (123456789, 1e-6, 9320816, Bits(18), 9320816, Bits(18), 12506655),
    (123456789, 1e-9, 19666646, Bits(28), 19666646, Bits(28), 45034963),
    (1000000000, 5e-1, 2817764, Bits(1), 2817764, Bits(1), 6309386),
    (1000000000, 2e-1, 6599182, Bits(2), 6599182, Bits(2), 9291324),
    (1000000000, 1e-1, 9436604, Bits(3), 9436604, Bits(3), 11482776),
    (1000000000, 3e-2, 15541897, SplitBlock, 14483338, Bits(5), 15541897),
    (1000000000, 1e-2, 20564910, SplitBlock256, 19327931, Bits(6), 19725211),
    (1000000000, 3.7e-3, 25370438, SplitBlock256, 23872521, Bits(8), 24045060),
    (1000000000, 1e-3, 32987913, SplitBlock256, 30250662, Bits(9), 30712120),
    (1000000000, 1e-4, 46107023, SplitBlock, 42800870, Bits(12), 46107023),
    (1000000000, 1e-6, 75498611, Bits(18), 75498611, Bits(18), 101303899),
    (1000000000, 1e-9, 159299829, Bits(28), 159299829, Bits(28), 364783199),
    (100000000000, 5e-1, 281776376, Bits(1), 281776376, Bits(1), 630938598),
    (100000000000, 2e-1, 659918197, Bits(2), 659918197, Bits(2), 929132380),
    (100000000000, 1e-1, 943660311, Bits(3), 943660311, Bits(3), 1148277591),
    (100000000000, 3e-2, 1554189658, SplitBlock, 1448333792, Bits(5), 1554189658),
    (100000000000, 1e-2, 2056490917, SplitBlock256, 1932793050, Bits(6), 1972521042),
    (100000000000, 3.7e-3, 2537043706, SplitBlock256, 2387252084, Bits(8), 2404505956),
    (100000000000, 1e-3, 3298791265, SplitBlock256, 3025066171, Bits(9), 3071211965),
    (100000000000, 1e-4, 4610702239, SplitBlock, 4280086991, Bits(12), 4610702239),
    (100000000000, 1e-6, 7549861013, Bits(18), 7549861013, Bits(18), 10130389868),
    (100000000000, 1e-9, 15929982887, Bits(28), 15929982887, Bits(28), 36478319851),
];

#[test]
fn blocked_sizes_are_pinned_for_a_grid_of_n_and_p() {
    let mut wrong = Vec::new();
    for (n, p, blocks, layout, compact, compact_layout, split) in PINNED {
        let got = (
            default_params(n, p).unwrap(),
            params_for(n, p, false).unwrap(),
            params_for(n, p, true).unwrap(),
        );
        let want = (
            (blocks, layout),
            (compact, compact_layout),
            (split, SplitBlock),
        );
        if got != want {
            wrong.push(format!("n = {n}, p = {p:e}: got {got:?}, pinned {want:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
