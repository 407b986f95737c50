"""ptx_functions.py on synthetic PTX: the same kernels moved to other files (other label and depot
numbers, line info, debug sections, a forward declaration) compare equal; a changed instruction, a
lost kernel or one that differs in any file it is compiled in does not."""
import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("ptx_functions", Path(__file__).resolve().parents[1] / "ptx_functions.py")
ptx_functions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ptx_functions)

HELPER = """.func _Z6helperv
(
	.param .b64 _Z6helperv_param_0
)
;
"""
KERNEL = """.visible .entry _Z{n}kernel{name}Pf(
	.param .u64 _Z{n}kernel{name}Pf_param_0
)
{{
	.local .align 8 .b8 	__local_depot{depot}[8];
	mov.u64 	%SPL, __local_depot{depot};
	.loc	{file} {line} 3
$L__BB{index}_1:
	{op}.f32 	%f1, %f1, %f2;
	@%p1 bra 	$L__BB{index}_1;
	ret;
}}
"""


def kernel(name, index, op="add", depot=0, file=1, line=10):
    return KERNEL.format(n=6 + len(name), name=name, index=index, depot=depot, file=file, line=line, op=op)


def write(tmp_path, name, *parts, debug=False):
    path = tmp_path / name
    path.write_text(".version 8.0\n" + "".join(parts) + ("\n\t.section\t.debug_str\n\t{\n.b8 95,90\n\t}\n" if debug else ""))
    return str(path)


def test_moved_kernels_compare_equal(tmp_path, capsys):
    before = write(tmp_path, "before.ptx", HELPER, kernel("a", 3), kernel("b", 7, depot=4), debug=True)
    first = write(tmp_path, "first.ptx", kernel("b", 0, depot=0, file=2, line=99), debug=True)
    second = write(tmp_path, "second.ptx", HELPER, kernel("a", 1, file=5), kernel("b", 2, depot=1))
    assert ptx_functions.main([before, "--", first, second]) == 0
    assert "1 compiled in more than one file" in capsys.readouterr().out


def test_a_changed_instruction_in_any_copy_is_found(tmp_path, capsys):
    before = write(tmp_path, "before.ptx", kernel("a", 3), kernel("b", 7))
    first = write(tmp_path, "first.ptx", kernel("a", 0), kernel("b", 1))
    second = write(tmp_path, "second.ptx", kernel("b", 0, op="mul"))
    assert ptx_functions.main([before, "--", first, second]) == 1
    out = capsys.readouterr().out
    assert "different: 1" in out and "second.ptx" in out


def test_a_lost_kernel_is_found(tmp_path, capsys):
    before = write(tmp_path, "before.ptx", kernel("a", 3), kernel("b", 7))
    after = write(tmp_path, "after.ptx", kernel("a", 0))
    assert ptx_functions.main([before, "--", after]) == 1
    assert "only before: 1" in capsys.readouterr().out


def test_declarations_are_not_functions(tmp_path):
    path = write(tmp_path, "only.ptx", HELPER, kernel("a", 0))
    assert [name for name, _ in ptx_functions.functions(path)] == ["_Z7kernelaPf"]
