"""SoftDTWKMeans: planted clusters of shifted and time-warped series are recovered (also padded,
with lengths); inertia_, labels_, predict and n_init mean what tslearn's do; init centres of
another length keep it, as tslearn's; errors name the parameter. The `cuda` test runs the same clustering on CUDA."""
import math

import pytest
import torch

import sdtw_torch
from conftest import requires_cuda
from sdtw_torch.barycenter import resample

# Series for the argument errors, refused before their values are read.
SERIES = torch.rand(4, 5, 1, generator=torch.Generator().manual_seed(11))

skip_without_cuda = requires_cuda[1]

PROTOTYPES = (
    lambda t: torch.sin(2 * math.pi * t),
    lambda t: torch.sign(torch.sin(4 * math.pi * t)),
    lambda t: 2 * t - 1,
)


def planted(per_cluster=8, n=30, seed=0, variable_lengths=False):
    """Members of each prototype: a random monotone time warp, a shift of up to 10% of the
    length, noise 0.05; with variable_lengths, lengths 18..n, padded with zeros to n."""
    g = torch.Generator().manual_seed(seed)
    series, labels, lengths = [], [], []
    for k, prototype in enumerate(PROTOTYPES):
        for _ in range(per_cluster):
            length = int(torch.randint(18, n + 1, (1,), generator=g)) if variable_lengths else n
            u = torch.linspace(0, 1, length, dtype=torch.float64)
            warp = u + 0.08 * torch.sin(math.pi * u) * (2 * torch.rand(1, generator=g, dtype=torch.float64) - 1)
            shift = 0.1 * (2 * torch.rand(1, generator=g, dtype=torch.float64) - 1)
            values = prototype((warp + shift).clamp(0, 1)) + 0.05 * torch.randn(length, generator=g,
                                                                                   dtype=torch.float64)
            padded = torch.zeros(n, dtype=torch.float64)
            padded[:length] = values
            series.append(padded)
            labels.append(k)
            lengths.append(length)
    order = torch.randperm(len(series), generator=g)
    X = torch.stack(series).unsqueeze(2)[order]
    return X, torch.tensor(labels)[order], torch.tensor(lengths)[order]


def same_partition(labels, truth):
    """Equal up to renaming the clusters."""
    pairs = set(zip(labels.tolist(), truth.tolist()))
    return len(pairs) == len(set(truth.tolist())) == len(set(labels.tolist()))


@pytest.mark.parametrize("method", ["lbfgs", "adam"])
def test_recovers_planted_clusters(method):
    X, truth, _ = planted(seed=1)
    km = sdtw_torch.SoftDTWKMeans(3, gamma=0.1, max_iter=10, barycenter_iter=30, barycenter_method=method,
                                  random_state=0)
    labels = km.fit_predict(X)
    assert same_partition(labels, truth)
    assert km.cluster_centers_.shape == (3, 30, 1) and km.cluster_centers_.dtype == torch.float64
    assert torch.equal(km.labels_, labels) and 1 <= km.n_iter_ <= 10
    # Each centre is closer (soft-DTW) to its own prototype than to the others.
    t = torch.linspace(0, 1, 30, dtype=torch.float64)
    prototypes = torch.stack([p(t) for p in PROTOTYPES]).unsqueeze(2)
    nearest = sdtw_torch.cdist_soft_dtw(km.cluster_centers_, prototypes, gamma=0.1).argmin(1)
    for k in range(3):
        assert int(nearest[k]) == int(truth[labels == k][0])


def test_recovers_padded_clusters_with_lengths():
    X, truth, lengths = planted(seed=2, variable_lengths=True)
    km = sdtw_torch.SoftDTWKMeans(3, gamma=0.1, max_iter=10, barycenter_iter=30, random_state=3)
    assert same_partition(km.fit_predict(X, X_lengths=lengths), truth)
    assert torch.equal(km.predict(X, X_lengths=lengths), km.labels_)


def test_inertia_labels_and_predict_in_tslearns_sense():
    X, _, _ = planted(per_cluster=5, seed=4)
    km = sdtw_torch.SoftDTWKMeans(3, gamma=0.5, max_iter=5, barycenter_iter=20, random_state=5).fit(X)
    D = sdtw_torch.cdist_soft_dtw(X, km.cluster_centers_, gamma=0.5)
    assert torch.equal(km.labels_, D.argmin(1))
    assert abs(km.inertia_ - float((D.min(1).values ** 2).mean())) <= 1e-12 * km.inertia_
    torch.testing.assert_close(km.transform(X), D)
    assert torch.equal(km.predict(X[:4]), km.labels_[:4])


def test_random_state_and_n_init():
    X, _, _ = planted(per_cluster=4, seed=6)
    kw = dict(gamma=0.5, max_iter=4, barycenter_iter=10, init="random")
    a = sdtw_torch.SoftDTWKMeans(3, random_state=7, **kw).fit(X)
    b = sdtw_torch.SoftDTWKMeans(3, random_state=7, **kw).fit(X)
    assert torch.equal(a.labels_, b.labels_) and torch.equal(a.cluster_centers_, b.cluster_centers_)
    # The first of three runs is the one-run fit (same generator); the best of three is no worse.
    c = sdtw_torch.SoftDTWKMeans(3, random_state=7, n_init=3, **kw).fit(X)
    assert c.inertia_ <= a.inertia_


def test_given_init_and_empty_clusters():
    X, truth, _ = planted(per_cluster=4, seed=8)
    centres = torch.stack([X[truth == k][0] for k in range(3)])
    km = sdtw_torch.SoftDTWKMeans(3, gamma=0.1, max_iter=5, barycenter_iter=20, init=centres).fit(X)
    assert same_partition(km.labels_, truth)
    far = centres.clone()
    far[2] = 1e3  # no series is nearest to it: every run starts from it, so the error names init
    with pytest.raises(ValueError, match="init: starting from these centres, cluster 2 has no series"):
        sdtw_torch.SoftDTWKMeans(3, max_iter=2, init=far).fit(X)


@pytest.mark.parametrize("length", [12, 30, 45])
def test_init_centres_of_another_length_keep_it(length):
    """tslearn's TimeSeriesKMeans takes init centres of any length: series are assigned by soft-DTW
    to them, and each update is the members' barycenter started from the centre, of its length."""
    X, truth, _ = planted(per_cluster=4, seed=9)
    centres = resample(torch.stack([X[truth == k][0] for k in range(3)]), None, length)
    kw = dict(gamma=0.1, barycenter_iter=15)
    one_round = sdtw_torch.SoftDTWKMeans(3, max_iter=1, init=centres, **kw).fit(X)
    first = sdtw_torch.cdist_soft_dtw(X, centres, gamma=0.1).argmin(1)
    expected = torch.stack([sdtw_torch.softdtw_barycenter(X[first == k], init=centres[k], gamma=0.1, max_iter=15,
                                                          method="lbfgs") for k in range(3)])
    assert one_round.cluster_centers_.shape == (3, length, 1)
    torch.testing.assert_close(one_round.cluster_centers_, expected, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(one_round.labels_, sdtw_torch.cdist_soft_dtw(X, expected, gamma=0.1).argmin(1))
    km = sdtw_torch.SoftDTWKMeans(3, max_iter=5, init=centres, **kw).fit(X)
    assert km.cluster_centers_.shape == (3, length, 1) and same_partition(km.labels_, truth)
    torch.testing.assert_close(km.predict(X), km.labels_)


@pytest.mark.parametrize("make,match", [
    (lambda: sdtw_torch.SoftDTWKMeans(0), "n_clusters must be an integer >= 1"),
    (lambda: sdtw_torch.SoftDTWKMeans(2, gamma=0), r"gamma must be > 0 for SoftDTWKMeans \(got 0"),
    (lambda: sdtw_torch.SoftDTWKMeans(2, max_iter=0), "max_iter must be"),
    (lambda: sdtw_torch.SoftDTWKMeans(2, n_init=0), "n_init must be"),
    (lambda: sdtw_torch.SoftDTWKMeans(2, tol=-1), "tol must be"),
    (lambda: sdtw_torch.SoftDTWKMeans(2, barycenter_iter=0), "barycenter_iter must be"),
    (lambda: sdtw_torch.SoftDTWKMeans(2, barycenter_method="sgd"), "barycenter_method must be"),
    (lambda: sdtw_torch.SoftDTWKMeans(2, init="kmeans"), "init must be"),
    (lambda: sdtw_torch.SoftDTWKMeans(2, random_state="x").fit(SERIES), "random_state must be"),
    (lambda: sdtw_torch.SoftDTWKMeans(5).fit(SERIES), r"n_clusters must be <= the number of series"),
    (lambda: sdtw_torch.SoftDTWKMeans(2, init=torch.zeros(2, 4, 2)).fit(SERIES),
     r"init must have shape \(2, N_z, 1\) with N_z >= 1 \(got \(2, 4, 2\)\)"),
    (lambda: sdtw_torch.SoftDTWKMeans(2, init=torch.zeros(3, 4, 1)).fit(SERIES),
     r"init must have shape \(2, N_z, 1\) with N_z >= 1 \(got \(3, 4, 1\)\)"),
    (lambda: sdtw_torch.SoftDTWKMeans(2, init=torch.zeros(2, 0, 1)).fit(SERIES),
     r"init must have shape \(2, N_z, 1\) with N_z >= 1 \(got \(2, 0, 1\)\)"),
    (lambda: sdtw_torch.SoftDTWKMeans(2).fit(SERIES[..., 0]), r"X must have shape \(B, N, D\)"),
    (lambda: sdtw_torch.SoftDTWKMeans(2).fit(SERIES, X_lengths=[5, 5, 6, 5]), r"X_lengths\[2\] = 6 is out of range \[1, 5\]"),
    (lambda: sdtw_torch.SoftDTWKMeans(2).predict(SERIES), "call fit before predict"),
    (lambda: sdtw_torch.SoftDTWKMeans(2).fit(SERIES.clone().index_put_((torch.tensor(2), torch.tensor(3)),
                                                                             torch.tensor(math.nan))),
     r"X must be finite: X\[2, 3, 0\] = nan"),
    (lambda: sdtw_torch.SoftDTWKMeans(2, init=torch.zeros(2, 5, 1).index_fill_(1, torch.tensor(4), math.inf))
     .fit(SERIES), r"init must be finite: init\[0, 4, 0\] = inf"),
    (lambda: sdtw_torch.SoftDTWKMeans(2).fit(SERIES.half()), "X is float16 on the CPU"),
    (lambda: sdtw_torch.SoftDTWKMeans(2).fit(torch.randn(4, 5, 1, device="meta")), "X is on the meta device"),
    (lambda: sdtw_torch.SoftDTWKMeans(2, init=torch.zeros(2, 5, 1, device="meta")).fit(SERIES),
     "init is on the meta device"),
    (lambda: sdtw_torch.SoftDTWKMeans(2, init=torch.zeros(2, 5, 1)).fit(SERIES),
     r"init: starting from these centres, cluster 1 has no series \(are two centres identical\?\)"),
    (lambda: sdtw_torch.SoftDTWKMeans(2, max_iter=1, barycenter_iter=1, random_state=0).fit(SERIES)
     .predict(torch.randn(3, 5, 1).index_fill_(1, torch.tensor(1), math.nan)), r"X must be finite: X\[0, 1, 0\] = nan"),
])
def test_bad_arguments_name_the_parameter(make, match):
    with pytest.raises((ValueError, RuntimeError, TypeError), match=match):
        make()


@pytest.mark.cuda
@skip_without_cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cuda_recovers_planted_clusters(dtype):
    X, truth, lengths = planted(per_cluster=20, n=64, seed=9, variable_lengths=True)
    km = sdtw_torch.SoftDTWKMeans(3, gamma=0.1, max_iter=10, barycenter_iter=50, random_state=0)
    labels = km.fit_predict(X.to("cuda", dtype), X_lengths=lengths.cuda())
    assert km.cluster_centers_.is_cuda and km.cluster_centers_.dtype == dtype
    assert same_partition(labels.cpu(), truth)


def test_transform_takes_any_floating_dtype_in_the_dtype_of_the_fit():
    X = torch.randn(6, 5, 2, generator=torch.Generator().manual_seed(3))
    km = sdtw_torch.SoftDTWKMeans(2, max_iter=2, barycenter_iter=2, random_state=0).fit(X)
    half = km.transform(X.half())
    assert half.dtype == torch.float32
    torch.testing.assert_close(half, km.transform(X.half().float()), rtol=0, atol=0)
