"""ptx_loops.py on a synthetic PTX file of two kernels: the named kernel's loops found by their back
edges, their instructions counted by opcode (guards dropped), and a name that is not one kernel's
refused."""
import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("ptx_loops", Path(__file__).resolve().parents[1] / "ptx_loops.py")
ptx_loops = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ptx_loops)

PTX = """
.version 8.0
.visible .entry _Z5firstPf(
	.param .u64 _Z5firstPf_param_0
)
{
	.reg .f32 	%f<4>;
	mov.f32 	%f1, 0f00000000;
$L__BB0_1:
	add.f32 	%f1, %f1, %f2;
	@%p1 bra 	$L__BB0_3;
	fma.rn.f32 	%f1, %f2, %f3, %f1;
$L__BB0_3:
	mul.f32 	%f2, %f2, %f3;
	@!%p2 bra 	$L__BB0_1;
	// a comment; not an instruction
	ret;
}
.visible .entry _Z6secondPf(
	.param .u64 _Z6secondPf_param_0
)
{
$L__BB1_1:
	add.s32 	%r1, %r1, 1;
	bra.uni 	$L__BB1_1;
}
"""


@pytest.fixture
def ptx(tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(PTX)
    return path


def test_the_named_kernels_loop_is_counted_by_opcode(ptx, capsys):
    assert ptx_loops.main([str(ptx), "5first"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out == ["loop $L__BB0_1..$L__BB0_3 (2 blocks): 5 instructions, bra 2, add 1, fma 1, mul 1"]


def test_blocks_are_counted_one_by_one(ptx, capsys):
    assert ptx_loops.main([str(ptx), "6second", "--blocks", "$L__BB1_1", "$L__BB1_1"]) == 0
    assert capsys.readouterr().out.strip() == "$L__BB1_1: 2 instructions, add 1, bra 1"


def test_entry_block_and_straight_code_have_no_loop():
    blocks = ptx_loops.basic_blocks("mov.u32 %r1, 0;\nret;\n")
    assert blocks == [("entry", ["mov.u32 %r1, 0;", "ret;"])]
    assert ptx_loops.loops(blocks) == []


@pytest.mark.parametrize("name", ["Pf", "nothing"])
def test_a_name_that_is_not_one_kernels_is_refused(ptx, name):
    with pytest.raises(SystemExit, match="kernels match"):
        ptx_loops.main([str(ptx), name])


def test_an_unknown_block_is_refused(ptx):
    with pytest.raises(SystemExit, match="no block"):
        ptx_loops.main([str(ptx), "5first", "--blocks", "$L__BB0_1", "$L__BB9_9"])
