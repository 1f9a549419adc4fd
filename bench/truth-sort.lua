-- bench/truth-sort.lua - the Lua workload of bench/truth: sorts numbers and
-- strings with table.sort and with a quicksort written in Lua, and prints a
-- checksum that does not depend on how the interpreter was built.
--
--   lua truth-sort.lua N
local n = tonumber(arg[1]) or 100000

-- A linear congruential generator, so every run sorts the same data.
local seed = 12345
local function rand(m)
	seed = (seed * 1103515245 + 12345) % 2147483648
	return seed % m
end

local function quicksort(t, lo, hi)
	while lo < hi do
		local p = t[(lo + hi) // 2]
		local i, j = lo, hi
		while i <= j do
			while t[i] < p do i = i + 1 end
			while t[j] > p do j = j - 1 end
			if i <= j then
				t[i], t[j] = t[j], t[i]
				i, j = i + 1, j - 1
			end
		end
		if j - lo < hi - i then
			quicksort(t, lo, j)
			lo = i
		else
			quicksort(t, i, hi)
			hi = j
		end
	end
end

local nums, strs = {}, {}
for i = 1, n do
	nums[i] = rand(1000000)
	strs[i] = string.format("k%07d", rand(10000000))
end

local a = table.move(nums, 1, n, 1, {})
table.sort(a)
local b = table.move(nums, 1, n, 1, {})
quicksort(b, 1, n)
local s = table.move(strs, 1, n, 1, {})
table.sort(s, function(x, y) return x > y end)
local q = table.move(strs, 1, n, 1, {})
quicksort(q, 1, n)

local sum = 0
for i = 1, n, 97 do
	assert(a[i] == b[i] and s[i] == q[n + 1 - i])
	sum = (sum + a[i] + #s[i]) % 1000000007
end
print(string.format("sorted %d numbers and %d strings, checksum %d", n, n, sum))
