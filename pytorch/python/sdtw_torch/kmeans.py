"""SoftDTWKMeans: k-means under soft-DTW (tslearn's TimeSeriesKMeans(metric="softdtw")) on CPU or CUDA."""
import math

import torch

from .barycenter import METHODS, check_finite_set, check_optimisable, resample, softdtw_barycenter
from .checks import integer_at_least, number_at_least
from .cdist import _pair_values, cdist_soft_dtw, check_series_set, check_set_lengths
from .functional import _check_gamma, _resolve


class EmptyClusterError(RuntimeError):
    """An assignment left a cluster without series (the run restarts from a new seeding)."""



def _generator(random_state):
    if isinstance(random_state, torch.Generator):
        return random_state
    generator = torch.Generator()
    if random_state is None:
        generator.seed()
    elif isinstance(random_state, int) and not isinstance(random_state, bool):
        generator.manual_seed(random_state)
    else:
        raise ValueError(f"random_state must be None, an int or a torch.Generator (got {random_state!r})")
    return generator


class SoftDTWKMeans:
    """k-means clustering of time series under soft-DTW, as tslearn's TimeSeriesKMeans(metric="softdtw").

    n_clusters: number of clusters K.
    gamma: soft-DTW smoothing, for the assignments and the barycenters.
    max_iter: at most this many assign/update rounds per run; a run stops early once the inertia
        changes by less than tol.
    n_init: runs from different seedings; the one with the lowest inertia is kept. A run that
        empties a cluster is restarted (at most max(n_init, 10) attempts, as tslearn).
    barycenter_iter: iterations of each centroid update (tslearn's max_iter_barycenter).
    barycenter_method: 'lbfgs' (tslearn's) or 'adam' (softdtw-cuda-torch's schedule); the K
        centroids are updated in one softdtw_barycenter call from the current ones.
    init: 'k-means++' (seeding weighted by the soft-DTW divergence to the nearest chosen centre,
        which is >= 0 where raw soft-DTW values can be negative), 'random' (K distinct series),
        or a (K, N_z, D) tensor of initial centres of any length N_z >= 1, as tslearn's: the
        barycenter updates start from the centres and keep their length.
    random_state: None, an int seed or a torch.Generator (sampling runs on the CPU).
    verbose: print the inertia of each round.

    After fit: cluster_centers_ (K, N_z, D) on X's device, labels_ (B,) int64, inertia_ (float):
    tslearn's inertia, the mean over series of the squared soft-DTW value to their centre,
    n_iter_ (rounds of the kept run). Assignments minimise the raw soft-DTW value, through
    cdist_soft_dtw; padded sets take X_lengths (B,). Centres have the padded length N, or
    init's length N_z when init is a tensor.
    """

    def __init__(self, n_clusters=3, *, gamma=1.0, max_iter=50, tol=1e-6, n_init=1, barycenter_iter=100,
                 barycenter_method="lbfgs", init="k-means++", random_state=None, verbose=False):
        self.n_clusters = integer_at_least(n_clusters, 1, "n_clusters")
        self.gamma = _check_gamma(gamma, smooth_for="SoftDTWKMeans")
        self.max_iter = integer_at_least(max_iter, 1, "max_iter")
        self.tol = number_at_least(tol, 0, "tol")
        self.n_init = integer_at_least(n_init, 1, "n_init")
        self.barycenter_iter = integer_at_least(barycenter_iter, 1, "barycenter_iter")
        if barycenter_method not in METHODS:
            raise ValueError(f"barycenter_method must be one of {', '.join(repr(m) for m in METHODS)} "
                             f"(got {barycenter_method!r})")
        self.barycenter_method = barycenter_method
        if not isinstance(init, torch.Tensor) and init not in ("k-means++", "random"):
            raise ValueError(f"init must be 'k-means++', 'random' or a (K, N_z, D) tensor (got {init!r})")
        self.init = init
        self.random_state = random_state
        self.verbose = verbose

    def _distances(self, X, lengths, centers):
        with torch.no_grad():
            return cdist_soft_dtw(X, centers, gamma=self.gamma, X_lengths=lengths)

    def _seed(self, X, lengths, generator):
        B, N, _ = X.shape
        K = self.n_clusters
        if isinstance(self.init, torch.Tensor):
            return self.init.to(device=X.device, dtype=X.dtype).clone()
        if self.init == "random":
            chosen = torch.randperm(B, generator=generator)[:K].tolist()
        else:
            chosen = self._kmeans_plusplus(X, lengths, generator)
        index = torch.tensor(chosen, device=X.device)
        # Seeds shorter than N are resampled to N rows (tslearn's _check_full_length).
        return resample(X.index_select(0, index), None if lengths is None else lengths.index_select(0, index), N)

    def _kmeans_plusplus(self, X, lengths, generator):
        """Arthur & Vassilvitskii's seeding with 2 + log(K) trials per centre (tslearn, scikit-learn)."""
        B = X.shape[0]
        trials = 2 + int(math.log(self.n_clusters))

        every = torch.arange(B, device=X.device)
        with torch.no_grad():  # each series' self-term once (cdist's normalize would redo it per centre), in cdist's chunks
            self_terms = _pair_values(X, X, every, every, lengths, lengths,
                                      _resolve(self.gamma, None, False, "sqeuclidean", None, "none"), None)

        def divergence(rows):
            index = torch.tensor(rows, device=X.device)
            with torch.no_grad():
                raw = cdist_soft_dtw(X.index_select(0, index), X, gamma=self.gamma, Y_lengths=lengths,
                                     X_lengths=None if lengths is None else lengths.index_select(0, index))
                half_self = 0.5 * (self_terms.index_select(0, index).unsqueeze(1) + self_terms.unsqueeze(0))
                return (raw - half_self).clamp(min=0).double().cpu()

        chosen = [int(torch.randint(B, (1,), generator=generator))]
        closest = divergence(chosen)[0]
        for _ in range(1, self.n_clusters):
            total = float(closest.sum())
            if total <= 0:  # every series coincides with a centre: pick any series not chosen yet
                rest = [b for b in range(B) if b not in chosen]
                chosen.append(rest[int(torch.randint(len(rest), (1,), generator=generator))])
                continue
            draws = torch.rand(trials, generator=generator, dtype=torch.float64) * total
            candidates = torch.searchsorted(closest.cumsum(0), draws).clamp(max=B - 1).tolist()
            with_candidate = torch.minimum(closest.unsqueeze(0), divergence(candidates))
            best = int(with_candidate.sum(1).argmin())
            chosen.append(candidates[best])
            closest = with_candidate[best]
        return chosen

    def _assign(self, X, lengths, centers):
        distances = self._distances(X, lengths, centers)
        labels = distances.argmin(1)
        inertia = float((distances.gather(1, labels.unsqueeze(1)).double() ** 2).mean())
        return labels, inertia

    def _fit_one(self, X, lengths, generator):
        K = self.n_clusters
        centers = self._seed(X, lengths, generator)
        old_inertia = math.inf
        for iteration in range(self.max_iter):
            labels, inertia = self._assign(X, lengths, centers)
            counts = torch.bincount(labels, minlength=K)
            if bool((counts == 0).any()):
                raise EmptyClusterError(f"cluster {int((counts == 0).nonzero()[0])} has no series")
            if self.verbose:
                print(f"SoftDTWKMeans: round {iteration + 1}: inertia {inertia:.6g}")
            members = torch.nn.functional.one_hot(labels, K).T.to(X.dtype)
            centers = softdtw_barycenter(X, gamma=self.gamma, weights=members, init=centers, X_lengths=lengths,
                                         max_iter=self.barycenter_iter, method=self.barycenter_method)
            if abs(old_inertia - inertia) < self.tol:
                break
            old_inertia = inertia
        labels, inertia = self._assign(X, lengths, centers)
        return centers, labels, inertia, iteration + 1

    def fit(self, X, X_lengths=None):
        """Cluster X (B, N, D) (X_lengths (B,) for a padded set); returns self."""
        check_series_set(X, "X")
        check_optimisable(X, "X", "SoftDTWKMeans")
        X = X.detach()
        lengths, _ = check_set_lengths(X_lengths, X, "X_lengths")
        check_finite_set(X, lengths, "X")
        K = self.n_clusters
        if K > X.shape[0]:
            raise ValueError(f"n_clusters must be <= the number of series ({X.shape[0]}) (got {K})")
        D = X.shape[2]
        if isinstance(self.init, torch.Tensor) and (self.init.dim() != 3 or self.init.shape[0] != K
                                                    or self.init.shape[1] < 1 or self.init.shape[2] != D):
            raise ValueError(f"init must have shape ({K}, N_z, {D}) with N_z >= 1 (got {tuple(self.init.shape)})")
        if isinstance(self.init, torch.Tensor):
            check_finite_set(self.init, None, "init")
        generator = _generator(self.random_state)
        best = None
        successes, attempts = 0, 0
        while successes < self.n_init and attempts < max(self.n_init, 10):
            attempts += 1
            try:
                run = self._fit_one(X, lengths, generator)
            except EmptyClusterError as error:
                if isinstance(self.init, torch.Tensor):  # every run starts from the same centres
                    raise ValueError(f"init: starting from these centres, {error} (are two centres identical?); give "
                                     f"distinct centres or use init='k-means++'") from error
                if self.verbose:
                    print(f"SoftDTWKMeans: restarting ({error})")
                continue
            successes += 1
            if best is None or run[2] < best[2]:
                best = run
        if best is None:
            raise RuntimeError(f"SoftDTWKMeans: every one of {attempts} runs left a cluster empty; "
                               f"try a smaller n_clusters or a larger gamma")
        self.cluster_centers_, self.labels_, self.inertia_, self.n_iter_ = best
        return self

    def _check_fitted(self):
        if not hasattr(self, "cluster_centers_"):
            raise RuntimeError("SoftDTWKMeans: call fit before predict or transform")

    def transform(self, X, X_lengths=None):
        """Soft-DTW from each series to each centre: (B, K)."""
        self._check_fitted()
        check_series_set(X, "X")
        if X.shape[2] != self.cluster_centers_.shape[2]:
            raise ValueError(f"X must have {self.cluster_centers_.shape[2]} features, as at fit (got {X.shape[2]})")
        if X.device != self.cluster_centers_.device:
            raise ValueError(f"X must be on the device of the data fit ({self.cluster_centers_.device}), got {X.device}")
        lengths = check_set_lengths(X_lengths, X, "X_lengths")[0]
        check_finite_set(X, lengths, "X")
        # Any floating dtype is compared in the dtype of the fit (float16 has no CPU kernels there).
        return self._distances(X.detach().to(self.cluster_centers_.dtype), lengths, self.cluster_centers_)

    def predict(self, X, X_lengths=None):
        """The index of the nearest centre (raw soft-DTW) of each series: (B,) int64."""
        return self.transform(X, X_lengths).argmin(1)

    def fit_predict(self, X, X_lengths=None):
        return self.fit(X, X_lengths).labels_
